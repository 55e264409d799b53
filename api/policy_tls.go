package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// TLSPolicy is the TLS policy of an HTTPS listener (DSL listeners[].tls,
// tlb.io/l7-tls).
type TLSPolicy struct {
	MinVersion   TLSVersion `json:"minVersion,omitempty"`
	CipherSuites []string   `json:"cipherSuites,omitempty"`
}

// TLSVersion is a TLS version such as "1.2"; it may be written as a
// number, as YAML reads an unquoted 1.2.
type TLSVersion string

// UnmarshalJSON takes a string or a number.
func (v *TLSVersion) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = TLSVersion(s)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("want a TLS version such as \"1.2\", got %s", b)
	}
	*v = TLSVersion(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}
