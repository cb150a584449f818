"""Reading prediction files: bytes and formats, columns and their roles, rows kept or dropped (counted), task
detection, the task parsers (``regression.py`` / ``classification.py``), the time column, built-in examples and
templates.
"""
