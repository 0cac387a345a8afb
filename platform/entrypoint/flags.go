package entrypoint

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/groundcrew/groundcrew/platform/config"
)

// ExitError is a command-line outcome that ends a tool with Code without
// being a failure to report: --help and --version (ExitOK), or a bad flag
// the flag package already explained (ExitConfig).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode is what a tool's main exits with after err: 0 for nil and for
// --help/--version, 2 for a bad command line, 1 for any other error
// (which main reports).
func ExitCode(err error) int {
	var e *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e):
		return e.Code
	default:
		return ExitFailed
	}
}

// ParseFlags parses a command-line tool's flags the way every groundcrew
// binary answers them: -h/--help writes what the tool is, its flags and
// the environment variables of vars' type (with defaults and meanings from
// the configuration reference) to stdout; --version prints the version;
// either returns an *ExitError with ExitOK. A flag the tool does not have
// is reported on stderr and returned as an *ExitError with ExitConfig.
func ParseFlags(fl *flag.FlagSet, about string, vars any, args []string, stdout, stderr io.Writer) error {
	version := fl.Bool("version", false, "print the version and commit and exit")
	fl.SetOutput(stderr)
	// The flag package calls Usage for -h too; the help goes to stdout
	// below, and a bad flag gets a pointer to it.
	fl.Usage = func() {}
	err := fl.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		for _, line := range config.Wrap(fl.Name()+" — "+about, 78) {
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintln(stdout, "\nFlags:")
		fl.SetOutput(stdout)
		fl.PrintDefaults()
		fl.SetOutput(stderr)
		fmt.Fprintln(stdout, "\nEnvironment variables (unset ones take the default):")
		config.WriteVariables(stdout, vars)
		fmt.Fprintln(stdout, "\nThe full reference: docs/configuration.md.")
		return &ExitError{Code: ExitOK}
	case err != nil:
		fmt.Fprintf(stderr, "see %s --help\n", fl.Name())
		return &ExitError{Code: ExitConfig}
	case *version:
		fmt.Fprintln(stdout, VersionLine(fl.Name()))
		return &ExitError{Code: ExitOK}
	}
	return nil
}
