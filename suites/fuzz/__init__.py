"""The fuzz suite: compositions of the input axes over every OpInfo, drawn, judged and shrunk."""
