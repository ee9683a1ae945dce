"""The Streamlit app: the analyst's window onto questions, answers and their evidence."""
