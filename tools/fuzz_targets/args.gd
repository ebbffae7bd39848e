extends Reference
# Settings of the fuzz targets: "--name=value" after the script on the command line, else the
# environment variable GDX_FUZZ_<NAME>, else the default.


static func value(name, default):
	for a in OS.get_cmdline_args():
		if a.begins_with("--" + name + "="):
			return a.substr(name.length() + 3, a.length())
	var env = OS.get_environment("GDX_FUZZ_" + name.to_upper().replace("-", "_"))
	if env != "":
		return env
	return default
