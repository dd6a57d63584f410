"""Statistics shared by every family and the runner: intervals, tests, multiple comparisons, power."""
