package opview

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

//go:embed templates/*.html
var templates embed.FS

// md renders Markdown with raw HTML off (goldmark's default: raw HTML
// becomes "<!-- raw HTML omitted -->") and links and formatting only.
var md = goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Table))

// policy keeps what Markdown text needs and nothing that loads or runs:
// no img (the browser would fetch an agent's URL), no style, no class.
var policy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "em", "strong", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true) // adds rel="noopener"
	return p
}()

// bidi are the characters that reorder text around them (U+202A-U+202E,
// U+2066-U+2069) and the marks; the view drops them from anything an agent
// wrote.
var bidi = strings.NewReplacer("\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u2066", "", "\u2067", "", "\u2068", "", "\u2069", "", "\u200e", "", "\u200f", "")

func clean(s string) string { return bidi.Replace(s) }

// Markdown renders untrusted Markdown to safe HTML.
func Markdown(src string) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert([]byte(clean(src)), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(policy.SanitizeBytes(buf.Bytes())) //nolint:gosec // sanitized just above
}

// chart draws counts as an SVG bar chart: attributes only, no style, so
// the CSP needs no 'unsafe-inline'.
func chart(counts []int) template.HTML {
	const w, h, bar = 240, 40, 10
	peak := 1
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="messages per hour, last 24 hours">`, w, h+2, w, h+2)
	for i, c := range counts {
		bh := c * h / peak
		if c > 0 && bh == 0 {
			bh = 1
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#4a7bd0"><title>%d</title></rect>`, i*bar, h-bh, bar-2, bh, c)
	}
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#999"/></svg>`, h+1, w, h+1)
	return template.HTML(b.String()) //nolint:gosec // numbers only
}

// requestChart draws requests opened and answered per hour as paired bars,
// one group per series (data-series, data-total), attributes only.
func requestChart(a RequestActivity) template.HTML {
	const w, h, slot, bar = 240, 40, 10, 4
	peak := 1
	for i := range a.Opened {
		peak = max(peak, a.Opened[i], a.Answered[i])
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="requests" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="requests opened and answered per hour, last 24 hours">`, w, h+2, w, h+2)
	for s, series := range []struct {
		name, fill string
		counts     []int
	}{{"opened", "#e0a030", a.Opened}, {"answered", "#3a9a4a", a.Answered}} {
		total := 0
		for _, c := range series.counts {
			total += c
		}
		fmt.Fprintf(&b, `<g data-series="%s" data-total="%d">`, series.name, total)
		for i, c := range series.counts {
			if c == 0 {
				continue
			}
			bh := max(c*h/peak, 1)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %d</title></rect>`,
				i*slot+s*bar, h-bh, bar, bh, series.fill, series.name, c)
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#999"/></svg>`, h+1, w, h+1)
	return template.HTML(b.String()) //nolint:gosec // numbers and fixed names only
}

func sum(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func byStatus(b *ViewBoard, status string) []ViewRequest {
	var out []ViewRequest
	for _, r := range b.Requests {
		if r.Status == status {
			out = append(out, r)
		}
	}
	return out
}

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"md": Markdown, "clean": clean, "chart": chart, "requestChart": requestChart, "sum": sum, "ago": ago, "byStatus": byStatus,
	"join": func(s []string) string { return clean(strings.Join(s, ", ")) },
}).ParseFS(templates, "templates/*.html"))

func render(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("%w %s: %w", errTemplate, name, err)
	}
	return buf.String(), nil
}
