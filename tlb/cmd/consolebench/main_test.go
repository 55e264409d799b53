package main

import (
	"bytes"
	"regexp"
	"testing"
)

func TestRunPrintsBench(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 300, 2, 2); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^BENCH console_page_ms_300_vips [0-9.]+ ms$`).Match(out.Bytes()) {
		t.Errorf("no BENCH line in:\n%s", out.String())
	}
	if err := run(&out, 0, 1, 1); err == nil {
		t.Error("0 VIPs accepted")
	}
}
