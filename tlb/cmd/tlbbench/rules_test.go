package main

import (
	"strings"
	"testing"
)

func TestWriteRestore(t *testing.T) {
	var b strings.Builder
	if err := writeRestore(&b, benchModel(2, 3, "")); err != nil {
		t.Fatal(err)
	}
	want := `-A -t 198.19.0.1:80 -s mh -b flag-1,flag-2
-a -t 198.19.0.1:80 -r 198.18.1.6:80 -i -w 1
-a -t 198.19.0.1:80 -r 198.18.1.4:80 -i -w 1
-a -t 198.19.0.1:80 -r 198.18.1.2:80 -i -w 1
-A -t 198.19.0.2:80 -s mh -b flag-1,flag-2
-a -t 198.19.0.2:80 -r 198.18.1.6:80 -i -w 1
-a -t 198.19.0.2:80 -r 198.18.1.4:80 -i -w 1
-a -t 198.19.0.2:80 -r 198.18.1.2:80 -i -w 1
`
	if b.String() != want {
		t.Errorf("restore file =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestBenchModelIsValidAndDistinct(t *testing.T) {
	d := benchModel(1000, 32, "")
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(d.Services) != 1000 || len(d.Services[999].RealServers) != 32 {
		t.Fatalf("model has %d services", len(d.Services))
	}
}
