package enricheval

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

// GroundcrewCollection is the collection groundcrew's own runbooks are
// indexed in (scripts/run.sh does the same with search-index -collection).
const GroundcrewCollection = "groundcrew"

// Corpus is the runbooks an evaluation indexes.
type Corpus struct {
	Docs []*searchv1.Document
	// Names maps a runbook's URL to its name (file name without .md).
	Names map[string]string
}

// DefaultBaseURL is the URL prefix of a runbook whose front matter names
// no url, as search-index's -base-url default.
const DefaultBaseURL = "https://docs.groundcrew.example/"

// LoadCorpus reads the team's runbooks from userDirs and groundcrew's own
// from groundcrewDir (in GroundcrewCollection), as search-index does:
// Markdown and text files, front matter giving the title and URL when it
// has them. A file without a url is DefaultBaseURL joined with its
// directory's and its own name; without a title, the search service
// takes the document's first heading. A runbook's name is its file name
// without the extension.
func LoadCorpus(userDirs []string, groundcrewDir string) (Corpus, error) {
	c := Corpus{Names: map[string]string{}}
	type source struct{ dir, collection string }
	var sources []source
	for _, d := range userDirs {
		sources = append(sources, source{d, ""})
	}
	sources = append(sources, source{groundcrewDir, GroundcrewCollection})
	for _, d := range sources {
		var files []string
		for _, ext := range []string{"*.md", "*.txt"} {
			fs, err := filepath.Glob(filepath.Join(d.dir, ext))
			if err != nil {
				return c, err
			}
			files = append(files, fs...)
		}
		if len(files) == 0 {
			return c, fmt.Errorf("no runbooks in %s", d.dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return c, err
			}
			fm, body := splitFrontMatter(string(b))
			name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
			u := fm["url"]
			if u == "" {
				u = DefaultBaseURL + path.Join(filepath.Base(filepath.Clean(d.dir)), filepath.Base(f))
			}
			if prev, ok := c.Names[u]; ok {
				return c, fmt.Errorf("%s: url %s is %s's too", f, u, prev)
			}
			doc := &searchv1.Document{Url: u, Title: strings.Trim(fm["title"], `"'`), Content: &searchv1.Document_Text{Text: body}}
			if d.collection != "" {
				doc.Metadata, _ = structpb.NewStruct(map[string]any{"collection": d.collection})
			}
			c.Docs = append(c.Docs, doc)
			c.Names[u] = name
		}
	}
	return c, nil
}

// splitFrontMatter separates a leading "---" block of "key: value" lines
// from the body.
func splitFrontMatter(s string) (map[string]string, string) {
	fm := map[string]string{}
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return fm, s
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return fm, s
	}
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			fm[strings.TrimSpace(strings.ToLower(k))] = strings.TrimSpace(v)
		}
	}
	return fm, strings.TrimLeft(body, "\n")
}
