"""A deal told again: replays step by step, verification, exports, record checks and the
replay page. Reads only: nothing here writes."""
