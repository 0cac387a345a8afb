package config

import (
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strings"

	"github.com/caarlos0/env/v11"
)

// variablesTable is the configuration reference: the Markdown table that
// docs/configuration.md also holds (a test keeps the two equal). Every
// binary embeds it, so `--help` explains each variable the way the
// documentation does.
//
//go:embed variables.md
var variablesTable string

// VariablesTable returns the configuration reference table (Markdown), as
// docs/configuration.md prints it.
func VariablesTable() string { return variablesTable }

// Variable is one environment variable a configuration struct reads.
type Variable struct {
	// Name is the variable, e.g. GROUNDING_MAX_SOURCES.
	Name string
	// Default is the struct's envDefault, else what the reference says
	// happens when it is unset (e.g. "– (SQLite under DATA_DIR)").
	Default string
	// Meaning is the reference's explanation, in plain text; empty when
	// the reference does not list the variable.
	Meaning string
	// Secret is true for variables never printed.
	Secret bool
}

// refRow is one row of the reference table.
type refRow struct {
	names    []*regexp.Regexp
	defaults []string
	meaning  string
}

// reference parses variablesTable once per call; it is small and only
// read for --help.
func reference() []refRow {
	var rows []refRow
	for _, line := range strings.Split(variablesTable, "\n") {
		cells := splitRow(line)
		if len(cells) != 4 || strings.HasPrefix(cells[0], "---") || cells[0] == "variable" {
			continue
		}
		var r refRow
		for _, n := range backticked(cells[0]) {
			pat := "^" + strings.ReplaceAll(regexp.QuoteMeta(n), regexp.QuoteMeta("<SVC>"), "[A-Z]+") + "$"
			r.names = append(r.names, regexp.MustCompile(pat))
		}
		r.defaults = splitDefaults(cells[1], len(r.names))
		r.meaning = plain(cells[3])
		rows = append(rows, r)
	}
	return rows
}

// splitRow splits a Markdown table row into its trimmed cells, honouring
// `\|` inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	line = strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|"))
	}
	return cells
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// backticked returns the code spans of a cell (the variable names).
func backticked(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// splitDefaults gives each of n variables of a row its default: a cell
// listing one default per variable ("`1s`, `10m`" or "`info` / `json`")
// is split, any other cell is every variable's default.
func splitDefaults(cell string, n int) []string {
	out := make([]string, n)
	parts := strings.Split(cell, ", ")
	if n > 1 && len(parts) != n {
		parts = strings.Split(cell, " / ")
	}
	for i := range out {
		if len(parts) == n {
			out[i] = plain(parts[i])
		} else {
			out[i] = plain(cell)
		}
	}
	return out
}

var (
	link     = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	emphasis = strings.NewReplacer("**", "", "`", "")
)

// plain turns a Markdown cell into text for a terminal.
func plain(s string) string {
	return emphasis.Replace(link.ReplaceAllString(s, "$1"))
}

// Variables lists the environment variables of cfg's type (a struct or a
// pointer to one) in declaration order, with their defaults and what the
// reference says they mean.
func Variables(cfg any) []Variable {
	t := reflect.TypeOf(cfg)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	rows := reference()
	fields := walk(t, "", nil)
	out := make([]Variable, 0, len(fields))
	for _, f := range fields {
		v := Variable{Name: f.key, Secret: f.secret}
		if f.hasDefault {
			v.Default = f.def
		}
		// A row naming the variable itself wins over a <SVC>_ pattern.
	rowLoop:
		for _, exact := range []bool{true, false} {
			for _, r := range rows {
				for i, re := range r.names {
					if re.MatchString(f.key) && exact == !strings.Contains(re.String(), "[A-Z]+") {
						v.Meaning = r.meaning
						if !f.hasDefault {
							v.Default = r.defaults[i]
						}
						break rowLoop
					}
				}
			}
		}
		if v.Default == "" {
			v.Default = "–"
		}
		out = append(out, v)
	}
	return out
}

// WriteVariables writes cfg's variables for a terminal: each name with its
// default, then its meaning wrapped and indented below it.
func WriteVariables(w io.Writer, cfg any) {
	for _, v := range Variables(cfg) {
		fmt.Fprintf(w, "  %s (default: %s)\n", v.Name, v.Default)
		meaning := v.Meaning
		if meaning == "" {
			meaning = "(not in the configuration reference)"
		}
		for _, line := range Wrap(meaning, 72) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
}

// Wrap breaks s into lines of at most width runes where it can (between
// words), for help text on a terminal.
func Wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Changed returns the attributes of cfg (a struct or a pointer to one)
// whose values differ from their defaults, secrets masked as in [Attrs]:
// what a start-up line needs to say.
func Changed(cfg any) []slog.Attr {
	v, ok := structValue(cfg)
	if !ok {
		return nil
	}
	def := reflect.New(v.Type())
	if err := env.ParseWithOptions(def.Interface(), env.Options{Environment: map[string]string{}}); err != nil {
		// A default the struct cannot parse is a programming error that
		// Load reports; here every value counts as changed.
		return Attrs(cfg)
	}
	all, defaults := Attrs(cfg), Attrs(def.Interface())
	out := make([]slog.Attr, 0, len(all))
	for i, a := range all {
		if i < len(defaults) && a.Value.String() == defaults[i].Value.String() {
			continue
		}
		out = append(out, a)
	}
	return out
}
