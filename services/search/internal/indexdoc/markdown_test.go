package indexdoc

import "testing"

func TestMarkdownText(t *testing.T) {
	md := "# Disk full\n\nAlert: `NodeFilesystemAlmostOutOfSpace` fires below 10%.\n\n## Mitigate\n- Rotate **logs**\n- Prune images: `crictl rmi --prune`\n\nSee [the docs](https://example.com/docs).\n"
	text, h1, headings := markdownText(md, "Disk full")
	want := "Alert: NodeFilesystemAlmostOutOfSpace fires below 10%.\nMitigate.\nRotate logs.\nPrune images: crictl rmi --prune.\nSee the docs."
	if text != want {
		t.Errorf("markdownText() text =\n%q\nwant\n%q", text, want)
	}
	if len(headings) != 1 || headings[0] != "Mitigate" {
		t.Errorf("headings = %q, want [Mitigate]", headings)
	}
	if h1 != "Disk full" {
		t.Errorf("h1 = %q, want %q", h1, "Disk full")
	}
	if looksLikeMarkdown("just a sentence. another one.") {
		t.Error("plain text taken for Markdown")
	}
	if !looksLikeMarkdown(md) {
		t.Error("Markdown with a heading not recognised")
	}
}
