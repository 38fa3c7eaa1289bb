"""`turnscore report`: one self-contained HTML file for a night or a date range.

`build_report` reads the warehouse (read-only) and writes the page; see `build` for the
period rules and `sql` for every query it runs.
"""

from turnscore.warehouse.report.build import ReportSummary, build_report, resolve_period
from turnscore.warehouse.report.data import Period, ReportData, load_report_data

__all__ = [
    "Period",
    "ReportData",
    "ReportSummary",
    "build_report",
    "load_report_data",
    "resolve_period",
]
