"""``cc.evaluate`` for each task: calibrators fitted on calibration rows and judged on held-out rows under one
protocol; ``tables.py`` holds the comparison tables.
"""
