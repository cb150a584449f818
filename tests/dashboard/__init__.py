"""Tests of ``dashboard/``: caches, stores, the page frame and the warm-up."""
