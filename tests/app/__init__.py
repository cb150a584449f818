"""AppTests of the dashboard's pages (streamlit.testing.v1, no browser), one file per page or page topic."""
