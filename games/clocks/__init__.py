"""Time limits, invitations, rematches and abandoned matches: who must act by when."""
