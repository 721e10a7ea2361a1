DATETIME_FORMAT = "N j, Y, H:i:s"
