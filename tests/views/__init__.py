"""Tests of ``views/``: the page view-models, without Streamlit."""
