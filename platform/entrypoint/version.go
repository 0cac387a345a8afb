package entrypoint

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at build time (the Makefile's build target
// passes -ldflags "-X …/entrypoint.Version=… -X …/entrypoint.Commit=…");
// a build without them reports the module version and VCS revision Go
// recorded, else "dev" and "unknown".
var (
	Version = ""
	Commit  = ""
)

// VersionLine is what `<binary> --version` prints: name, version, commit
// and the Go release that built it.
func VersionLine(name string) string {
	version, commit := Version, Commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && commit == "" {
				commit = s.Value
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s %s (commit %s, %s)", name, version, commit, runtime.Version())
}
