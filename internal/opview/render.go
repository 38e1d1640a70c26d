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

// series is one series of a chart: its name, colour and counts.
type series struct {
	name, fill string
	counts     []int
}

// spanOf is a chart span's bucket width and count, its unit's name and
// the label of bucket i of n ending at now.
func spanOf(span string) (w time.Duration, n int, unit string, label func(now time.Time, i int) string) {
	if span == "7d" {
		return 24 * time.Hour, 7, "day", func(now time.Time, i int) string {
			return now.Add(-time.Duration(6-i) * 24 * time.Hour).UTC().Format("Mon 2")
		}
	}
	return time.Hour, 24, "hour", func(now time.Time, i int) string {
		return now.Add(-time.Duration(23-i) * time.Hour).UTC().Format("15h")
	}
}

// barChart draws series as an SVG bar chart over span ("24h" or "7d"):
// a y axis with its peak, an x axis with bucket labels (every sixth hour,
// every day), each bar's value and bucket on hover (<title>), and one
// group per series (data-series, data-total). Attributes only, no style,
// so the CSP needs no 'unsafe-inline'.
func barChart(c Charts, span, aria string, ss []series, skipZero bool) template.HTML {
	_, n, _, label := spanOf(span)
	const left, top, h, bottom = 22, 4, 40, 14
	slot := 10
	if n == 7 {
		slot = 34
	}
	bar := (slot - 2) / len(ss)
	w := left + n*slot
	peak := 1
	for _, s := range ss {
		for _, v := range s.counts {
			peak = max(peak, v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-span="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		span, w, top+h+bottom, w, top+h+bottom, template.HTMLEscapeString(aria))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="8" text-anchor="end" fill="#555">%d</text>`, left-3, top+7, peak)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="8" text-anchor="end" fill="#555">0</text>`, left-3, top+h)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, left, top, left, top+h)
	for si, s := range ss {
		total := 0
		for _, v := range s.counts {
			total += v
		}
		fmt.Fprintf(&b, `<g data-series="%s" data-total="%d">`, s.name, total)
		for i, v := range s.counts {
			if v == 0 && skipZero {
				continue
			}
			bh := v * h / peak
			if v > 0 && bh == 0 {
				bh = 1
			}
			// A zero still gets a hover target, one pixel high.
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %d · %s</title></rect>`,
				left+i*slot+si*bar, top+h-max(bh, 1), bar, max(bh, 1), s.fill, s.name, v, label(c.Now, i))
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, left, top+h+1, w, top+h+1)
	step := 6
	if n == 7 {
		step = 1
	}
	for i := 0; i < n; i += step {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="8" fill="#555">%s</text>`, left+i*slot, top+h+bottom-2, label(c.Now, i))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers, fixed names and times only
}

// chart draws a page's messages per hour (span "24h") or day ("7d").
func chart(c Charts, span string) template.HTML {
	counts := c.Activity
	if span == "7d" {
		counts = c.Daily
	}
	_, _, unit, _ := spanOf(span)
	return barChart(c, span, "messages per "+unit, []series{{"messages", "#4a7bd0", counts}}, false)
}

// requestChart draws requests opened and answered per hour or day as
// paired bars.
func requestChart(c Charts, span string) template.HTML {
	a := c.Requests
	if span == "7d" {
		a = c.RequestsWeek
	}
	_, _, unit, _ := spanOf(span)
	return barChart(c, span, "requests opened and answered per "+unit,
		[]series{{"opened", "#e0a030", a.Opened}, {"answered", "#3a9a4a", a.Answered}}, true)
}

func sum(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// when shows t relative to now with the exact time on hover, as a <time>
// element ("—" when zero).
func when(t time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	u := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`, //nolint:gosec // times only
		u.Format(datetimeLayout), u.Format("2006-01-02 15:04:05 UTC"), ago(t)))
}

// short abbreviates a hash to its first 12 characters (the whole one is
// the element's title).
func short(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:12] + "…"
}

// datetimeLayout is RFC 3339 with a fixed nine-digit fraction, so the
// attributes of two times sort as the times do.
const datetimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// plural is "1 reply", "2 replies".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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
	"when": when, "plural": plural, "short": short,
	"viewPageSize": func() int { return ViewPageSize }, "viewBoardMessages": func() int { return ViewBoardMessages },
	"viewChartEntries": func() int { return ViewChartEntries }, "viewReportsPerMessage": func() int { return ViewReportsPerMessage },
	"staleAfter": func() string { return fmt.Sprintf("%g h", ViewStaleAfter.Hours()) },
	"join":       func(s []string) string { return clean(strings.Join(s, ", ")) },
}).ParseFS(templates, "templates/*.html"))

func render(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("%w %s: %w", errTemplate, name, err)
	}
	return buf.String(), nil
}
