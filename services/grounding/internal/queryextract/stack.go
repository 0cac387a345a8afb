package queryextract

import (
	"regexp"
	"strings"
)

// Stack trace shapes. For every language the query keeps the language, the
// error type, the key words of its message and the top frame's function:
// the type and message find the cause, the frame finds the library.
var (
	reJavaFrame  = regexp.MustCompile(`(?m)^\s+at\s+(?:[\w.$-]+/)?([\w$.<>]+)\((?:[^)]*\.(?:java|kt|scala|groovy):\d+|Native Method|Unknown Source)\)`)
	reJavaHeader = regexp.MustCompile(`(?m)^(?:Exception in thread "[^"\n]*"\s+|Caused by:\s+)?((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)(?::[ \t]*(.*))?$`)

	reGoPanic = regexp.MustCompile(`(?m)^(panic|fatal error): (.+)$`)
	reGoFrame = regexp.MustCompile(`(?m)^((?:[\w.~-]+/)*[\w.~-]+\.(?:\(\*?[\w\[\],. ]+\)\.)?[\w.\[\]]+)\(.*\)\n\t\S+\.go:\d+`)

	rePyTrace = regexp.MustCompile(`Traceback \(most recent call last\):`)
	rePyFrame = regexp.MustCompile(`(?m)^\s+File "([^"\n]+)", line \d+, in (\S+)`)
	rePyError = regexp.MustCompile(`(?m)^([A-Za-z_][\w.]*)(?::[ \t]*(.*))?$`)

	reNodeFrame  = regexp.MustCompile(`(?m)^\s+at (?:async )?(?:([^\s(]+)(?: \[as [^\]]+\])? \()?(?:node:[\w/]+|[^\s()]+\.(?:js|mjs|cjs|ts)):\d+:\d+\)?\s*$`)
	reNodeHeader = regexp.MustCompile(`(?m)^(?:Uncaught )?(\w*(?:Error|Exception))(?: \[[\w_]+\])?: (.+)$`)
)

// stackTrace recognises a stack trace, adds its terms and returns the
// format's name, or returns "" for anything else.
func (e *extractor) stackTrace() string {
	src := e.src
	switch {
	case rePyTrace.MatchString(src):
		e.python()
		return "python traceback"
	case reGoPanic.MatchString(src) && strings.Contains(src, "goroutine "):
		e.goPanic()
		return "go panic"
	case reJavaFrame.MatchString(src):
		if e.java() {
			return "java stack trace"
		}
	case reNodeFrame.MatchString(src) && reNodeHeader.MatchString(src):
		e.node()
		return "node.js stack trace"
	}
	return ""
}

// message runs the generic extraction over one line of the input.
func (e *extractor) message(start, end int) {
	if start >= 0 && end > start {
		e.generic(start, end)
	}
}

func (e *extractor) java() bool {
	headers := reJavaHeader.FindAllStringSubmatchIndex(e.src, -1)
	// The root cause is the last "Caused by:"; without one, the first
	// exception line.
	pick := -1
	for i, h := range headers {
		line := e.src[h[0]:h[1]]
		name := e.src[h[2]:h[3]]
		if strings.HasPrefix(line, "Caused by:") {
			pick = i
		} else if pick < 0 && (strings.Contains(name, "Exception") || strings.Contains(name, "Error") || strings.Contains(name, "Throwable")) {
			pick = i
		}
	}
	if pick < 0 {
		return false
	}
	h := headers[pick]
	e.add("java", -1, prioProduct)
	fqn := e.src[h[2]:h[3]]
	e.add(fqn[strings.LastIndexByte(fqn, '.')+1:], h[2], prioName)
	e.message(h[4], h[5])
	if m := reJavaFrame.FindStringSubmatchIndex(e.src[h[1]:]); m != nil {
		segs := strings.Split(e.src[h[1]+m[2]:h[1]+m[3]], ".")
		frame := segs[len(segs)-1]
		if len(segs) >= 2 {
			frame = segs[len(segs)-2] + "." + frame
		}
		e.add(frame, h[1]+m[2], prioProduct)
	}
	return true
}

func (e *extractor) goPanic() {
	m := reGoPanic.FindStringSubmatchIndex(e.src)
	e.add("golang", -1, prioProduct)
	kind := e.src[m[2]:m[3]]
	e.add(kind, m[2], prioName)
	e.message(m[4], m[5])
	// The first frame outside the runtime is where the program failed.
	for _, f := range reGoFrame.FindAllStringSubmatchIndex(e.src[m[1]:], -1) {
		name := e.src[m[1]+f[2] : m[1]+f[3]]
		if strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "panic") {
			continue
		}
		// Drop the import path: pgxpool.(*Pool).Acquire is how Go
		// prints it and how people search for it.
		if k := strings.LastIndexByte(name[:strings.IndexByte(name+"(", '(')], '/'); k >= 0 {
			name = name[k+1:]
		}
		e.add(name, m[1]+f[2], prioProduct)
		break
	}
}

func (e *extractor) python() {
	e.add("python", -1, prioProduct)
	// The exception is the last unindented line after the last traceback;
	// with chained exceptions that is the one that escaped.
	last := rePyTrace.FindAllStringIndex(e.src, -1)
	tail := last[len(last)-1][1]
	var errIdx []int
	for _, m := range rePyError.FindAllStringSubmatchIndex(e.src[tail:], -1) {
		errIdx = m
	}
	frames := rePyFrame.FindAllStringSubmatchIndex(e.src[tail:], -1)
	if errIdx != nil {
		name := e.src[tail+errIdx[2] : tail+errIdx[3]]
		e.add(name[strings.LastIndexByte(name, '.')+1:], tail+errIdx[2], prioName)
		if errIdx[4] >= 0 {
			e.message(tail+errIdx[4], tail+errIdx[5])
		}
	}
	if len(frames) > 0 {
		// "most recent call last": the top frame is the last one.
		f := frames[len(frames)-1]
		e.add(pyModule(e.src[tail+f[2]:tail+f[3]])+"."+e.src[tail+f[4]:tail+f[5]], tail+f[2], prioProduct)
	}
}

// pyModule turns a file path into a module name: site-packages paths keep
// the package path (requests.adapters), others just the file (worker).
func pyModule(path string) string {
	path = strings.TrimSuffix(strings.ReplaceAll(path, "\\", "/"), ".py")
	for _, marker := range []string{"site-packages/", "dist-packages/"} {
		if k := strings.LastIndex(path, marker); k >= 0 {
			return strings.ReplaceAll(path[k+len(marker):], "/", ".")
		}
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

func (e *extractor) node() {
	h := reNodeHeader.FindStringSubmatchIndex(e.src)
	e.add("nodejs", -1, prioProduct)
	if name := e.src[h[2]:h[3]]; name != "Error" {
		e.add(name, h[2], prioName)
	}
	e.message(h[4], h[5])
	if f := reNodeFrame.FindStringSubmatchIndex(e.src[h[1]:]); f != nil && f[2] >= 0 {
		e.add(e.src[h[1]+f[2]:h[1]+f[3]], h[1]+f[2], prioProduct)
	}
}
