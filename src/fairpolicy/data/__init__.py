"""Reading data files and binding columns to control roles."""
