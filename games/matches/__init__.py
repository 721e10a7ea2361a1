"""Matches, their deals and the move log: create, join, move, resign, abort; the match
detail each viewer sees (``selectors``), the snapshot cache a move keeps (``snapshots``),
bot replies, and the HTTP layer (``apis``, ``serializers``)."""
