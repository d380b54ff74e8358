"""What every hand-labelled set of sessions (dropped_fresh, dropped_blind) is checked against: a
transcript's whole text, tool inputs and results included, and Claude Code's nine summary sections."""

from __future__ import annotations

NINE_SECTIONS = (
    "1. Primary Request and Intent:",
    "2. Key Technical Concepts:",
    "3. Files and Code Sections:",
    "4. Errors and fixes:",
    "5. Problem Solving:",
    "6. All user messages:",
    "7. Pending Tasks:",
    "8. Current Work:",
    "9. Optional Next Step:",
)


def transcript_text(entries: list[dict]) -> str:
    """Every string of every entry's message, one per line."""
    return "\n".join(_texts([entry["message"] for entry in entries]))


def has_the_nine_sections_in_order(summary: str) -> bool:
    positions = [summary.find(section) for section in NINE_SECTIONS]
    return -1 not in positions and positions == sorted(positions)


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []
