"""Reading prediction files, bottom to top:

* ``columns.py`` — column names and their roles: the alias table, quantile / sample / score / feature column
  patterns, ``find_column`` / ``resolve_column``, the header check, columns kept for slices;
* ``rows.py`` — row values (numbers, labels), split / group / model labels, ``RowFilter`` (drop reasons, counted),
  rows merged by a stray quote;
* ``text.py`` — delimited text: encodings, leading comments, delimiter sniffing, ``read_text``;
* ``bytes.py`` — ``read_table``: size limits before decoding, compression, Parquet / npz / Excel, else text;
* ``detect.py`` — ``detect_task`` (regression or classification) and ``guess_columns``;
* ``regression.py`` / ``classification.py`` — the task parsers (frame → ``PredictionSet``);
* ``timecol.py`` (the time column), ``examples.py`` (built-in examples), ``templates.py`` (downloadable template
  files), ``toy.py`` (toy heteroscedastic data sets).
"""
