package admin

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// TokenEnv is the environment variable that holds the admin token.
const TokenEnv = "EDDY_ADMIN_TOKEN"

// ResolveToken returns the admin token from the first source that has one:
// flagValue, then the environment variable EDDY_ADMIN_TOKEN, then the
// trimmed contents of tokenFile (if tokenFile is not ""). It returns "" if
// none has one, and an error if tokenFile is needed but cannot be read or
// is empty.
//
// Prefer the environment or a file (mode 0600) to a flag: a flag's value is
// visible to every user of the machine in the process list.
func ResolveToken(flagValue, tokenFile string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if v := strings.TrimSpace(os.Getenv(TokenEnv)); v != "" {
		return v, nil
	}
	if tokenFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("admin token: %s: %w", tokenFile, errEmptyTokenFile)
	}
	return tok, nil
}

var errEmptyTokenFile = errors.New("the file is empty")
