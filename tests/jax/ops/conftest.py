"""Op matrix: prints what was covered (ops, dtypes, cases) at the end of the run."""
from .compare import STATS


def pytest_terminal_summary(terminalreporter):
    if not STATS["programs"]:
        return
    terminalreporter.write_sep("-", "StableRT op matrix")
    terminalreporter.write_line(
        f"{len(STATS['ops'])} ops, {len(STATS['dtypes'])} dtypes, {len(STATS['op_dtypes'])} op x dtype pairs, "
        f"{STATS['cases']} cases in {STATS['programs']} compared programs, {STATS['elements']} elements compared")
