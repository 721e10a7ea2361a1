"""The pages a person plays on: sign up, sign in, the lobby and the table (``/play/``).

They are the API's first client: the pages are shells, and everything a player sees or
does at the lobby and the table goes through the public REST API (``/api/v1/``) with the
session's cookie (and its CSRF token for writes), from plain ES modules in
``games/static/games/play/``.
"""
