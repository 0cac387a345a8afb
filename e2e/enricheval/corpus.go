package enricheval

import (
	"bufio"
	"fmt"
	"os"
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

// LoadCorpus reads the team's runbooks from userDir and groundcrew's own
// from groundcrewDir (in GroundcrewCollection), as search-index does:
// front matter gives the title and URL, the rest is the text.
func LoadCorpus(userDir, groundcrewDir string) (Corpus, error) {
	c := Corpus{Names: map[string]string{}}
	for _, d := range []struct{ dir, collection string }{{userDir, ""}, {groundcrewDir, GroundcrewCollection}} {
		files, err := filepath.Glob(filepath.Join(d.dir, "*.md"))
		if err != nil {
			return c, err
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
			if fm["url"] == "" {
				return c, fmt.Errorf("%s: front matter has no url", f)
			}
			doc := &searchv1.Document{Url: fm["url"], Title: fm["title"], Content: &searchv1.Document_Text{Text: body}}
			if d.collection != "" {
				doc.Metadata, _ = structpb.NewStruct(map[string]any{"collection": d.collection})
			}
			c.Docs = append(c.Docs, doc)
			c.Names[fm["url"]] = strings.TrimSuffix(filepath.Base(f), ".md")
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
