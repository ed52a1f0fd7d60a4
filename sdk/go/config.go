package eddy

// Configuration (ABI.md "Configuration"): the entries of the step's
// config: in the pipeline file, values and secrets that the node reads from
// its environment or files. Reading one is a host call; a function that
// reads one per record may keep it in a variable (it does not change while
// an instance lives: a new config comes with a new instance).

// configBuf receives config_get values; it grows to the largest read.
var configBuf []byte

// Config returns the value of the step's config entry name, and whether
// the step has it. The value is a copy the function may keep.
func Config(name string) (string, bool) {
	if configBuf == nil {
		configBuf = make([]byte, 256)
	}
	for range maxStateTries {
		n := hostConfigGet(name, configBuf[:cap(configBuf)])
		switch {
		case n < 0:
			return "", false
		case int(n) <= cap(configBuf):
			return string(configBuf[:n]), true
		}
		configBuf = make([]byte, int(n))
	}
	return "", false
}
