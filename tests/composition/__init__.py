"""The composition matrix (issue 31): every family x answer form x order x conversation x mode."""
