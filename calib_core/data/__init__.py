"""Reading prediction files (and writing tables back), bottom to top:

* ``columns.py`` — column names and their roles: the alias table, ``find_column`` / ``resolve_column``, the header
  check, columns kept for slices; ``columns_patterns.py`` — columns found by name pattern (quantile levels,
  ensemble members, class scores, features);
* ``columns_option.py`` — the column mapping in command-line words (``--columns role=name`` ↔ ``columns=``);
* ``rows.py`` — row values (numbers, labels), ``RowFilter`` (drop reasons, counted), rows merged by a stray quote;
  ``rows_labels.py`` — the split / group / model columns (calibration / test roles);
* ``text.py`` — delimited text: encodings, leading comments, delimiter sniffing, ``read_text``;
* ``bytes.py`` — ``read_table``: size limits before decoding, compression, Parquet / npz / Excel, else text;
* ``detect.py`` — ``detect_task`` (regression or classification) and ``guess_columns``;
* ``timecol.py`` — the time column;
* ``regression.py`` / ``classification.py`` — the task parsers (frame → ``PredictionSet``);
  ``classification_classes.py`` — which label value is which score column;
* ``writing.py`` — tables to files: CSV with spreadsheet formulas neutralised, Parquet, predictions in the
  loader's own layout (re-exported by ``calib_core.export``); output files that never overwrite an input;
* ``examples.py`` (built-in examples), ``templates.py`` (downloadable template files), ``toy.py`` (toy
  heteroscedastic data sets);
* ``hub.py`` — forecast hubs (``read_hub``: hubverse and legacy COVID-19 hub model output with its truth, one row per
  model × forecast unit), with ``hub_formats.py`` (the long formats), ``hub_truth.py`` (target data and the join),
  ``hub_pivot.py`` (long → one row per unit) and ``hub_example.py`` (a seeded example hub with its target data).
"""
