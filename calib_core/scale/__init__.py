"""Data past memory: mergeable summaries per task, slice summaries and the Dask engine over Parquet files.
"""
