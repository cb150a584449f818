"""Page view-models of the dashboard: pure pandas and Plotly, no Streamlit.

Each module turns what ``calib_core`` computes into what a page shows (tables with display labels, selections,
summaries of server-side data sets).  ``dashboard/`` draws them with Streamlit; ``calib_core`` never imports them.
"""
