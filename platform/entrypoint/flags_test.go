package entrypoint

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

type toolVars struct {
	Addr string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int // ExitCode of the result
		stdout []string
		stderr string
	}{
		{name: "no flags", args: []string{"dir"}, code: ExitOK},
		{name: "-h", args: []string{"-h"}, code: ExitOK, stdout: []string{
			"tool — ingests things\n", "Flags:\n", "-collection string", "RAG_ADDR (default: 127.0.0.1:50053)\n      where rag listens and is dialled",
		}},
		{name: "--help", args: []string{"--help"}, code: ExitOK, stdout: []string{"Flags:"}},
		{name: "--version", args: []string{"--version"}, code: ExitOK, stdout: []string{"tool dev (commit unknown"}},
		{name: "unknown flag", args: []string{"--nope"}, code: ExitConfig, stderr: "flag provided but not defined: -nope\nsee tool --help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			fl := flag.NewFlagSet("tool", flag.ContinueOnError)
			fl.String("collection", "", "collection to ingest into")
			err := ParseFlags(fl, "ingests things", toolVars{}, tt.args, &stdout, &stderr)
			if got := ExitCode(err); got != tt.code {
				t.Errorf("ExitCode = %d, want %d (err %v)", got, tt.code, err)
			}
			if tt.name == "no flags" && (err != nil || fl.Arg(0) != "dir") {
				t.Errorf("plain parse: err %v, args %q", err, fl.Args())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want it to hold %q", stderr.String(), tt.stderr)
			}
		})
	}
	if ExitCode(errors.New("dial failed")) != ExitFailed {
		t.Error("a plain error does not exit 1")
	}
}
