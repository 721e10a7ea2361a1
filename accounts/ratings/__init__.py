"""Ratings, in one place: the pure math over OpenSkill (``math``), the writes that apply
a rated game or rebuild everything (``services``), the reads (``selectors``) and the
admin. accounts never imports games: games turns a finished match into a
``math.RatedGame`` (games.rated_games) and hands it to ``services``."""
