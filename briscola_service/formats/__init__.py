"""Date formats of the pages Django renders (the admin's): times to the second, so that
what happened in a match can be put in order (settings.FORMAT_MODULE_PATH). Everything
else is Django's format for the language."""
