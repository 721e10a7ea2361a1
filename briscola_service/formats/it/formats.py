DATETIME_FORMAT = "l d F Y H:i:s"
