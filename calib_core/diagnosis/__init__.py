"""``cc.diagnose`` for each task: metrics, diagram tables and inference gathered into a Report; ``tables.py`` turns a
Report into display tables with verdict words.
"""
