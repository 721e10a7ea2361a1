"""Players as others see them: profiles, rating histories, match lists, the leaderboard.
Reads only; the ratings themselves live in accounts.ratings."""
