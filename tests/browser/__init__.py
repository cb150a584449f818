"""Real-browser tests: Playwright driving Debian's Chromium against ``streamlit run app.py`` (marker ``browser``)."""
