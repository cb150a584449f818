"""The test suite: one folder per layer of the project (``tests/<layer>/test_<module>.py``), the AppTests in
``tests/app/``, the real-browser tests in ``tests/browser/``; project-wide checks at this level."""
