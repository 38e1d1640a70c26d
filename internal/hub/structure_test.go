package hub

// The house rules of the domain package, checked over its own source:
//
//   - every key is built in package table: no string literal starting with
//     a key prefix of table's families, and no store.Key composite literal,
//     in the domain or the packages that read the table beside it;
//   - retries are the kernel's (retry, the intent finisher): no loop
//     outside the kernel files checks a failed condition;
//   - a capability file uses only its own unexported names and those of
//     the kernel and shared files.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/hub/table"
)

// kernelFiles run every call (kernel.go's doc) or are the machinery every
// tool shares: any file may use their names, and retry loops live here.
var kernelFiles = []string{
	"kernel.go", "intent.go", "idempotency.go", "serial.go", "session.go",
	"auth.go", "limits.go", "readerr.go", "receipts.go", "fanout.go",
	"wait.go", "page.go", "profile.go",
	// hub.go is the composition root: the Hub, New, and the table of
	// intent kinds wiring each kind to its tool's step.
	"hub.go",
}

// sharedFiles hold vocabulary every capability uses (argument checks,
// DTO types, small text and key helpers); any file may use their names.
var sharedFiles = []string{
	"validate.go", "types.go", "parallel.go", "keyscope.go", "credentials.go",
	"textfold.go", "envelope.go", "cursorkey.go",
}

// crossUses are the capability-to-capability uses left today, each
// "file -> name": record types on their way into package table, the
// operator view on its way out of the package, and the message send that
// requests reuse. The list only shrinks: an entry no longer used fails
// too.
var crossUses = []string{
	// ownerscope.go is the operator view's read port: it hands the view
	// the inbox scan budget and the stream id parser, as the tools use them.
	"ownerscope.go -> inboxScanBudget", "ownerscope.go -> parseStream",
	"ackmark.go -> ackOpen", "admin.go -> boxItem", "admin.go -> cardItems", "admin.go -> liveKeys",
	"admin.go -> unknownBox", "admin_listings.go -> cardItems", "admin_owner.go -> unknownBox", "admin_rooms.go -> cardItems",
	"admin_rooms.go -> checkBrief", "admin_rooms.go -> roomArchived", "admin_rooms.go -> roomDTO", "admin_rooms.go -> unknownBox",
	"admin_rooms.go -> visible", "inbox.go -> ackWatermark", "inbox.go -> parseStream", "inbox.go -> roomAccess",
	"inbox.go -> span", "memory.go -> firstInvalid", "messages.go -> checkFiles", "messages.go -> requestOps",
	"messages.go -> roomAccess", "messages.go -> roomSlots", "messages.go -> sameBoxAgent", "messages.go -> stillMember",
	"messages.go -> stripIDs", "prime.go -> checkpointDTO", "requests.go -> checkFiles", "requests.go -> declareSend",
	"requests.go -> newMessage", "requests.go -> parseStream", "requests.go -> slots",
}

// parseDir parses the non-test Go files of dir, by base name.
func parseDir(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = f
	}
	return files
}

// keyPrefixes are the literal starts of keys in table's families: every
// partition prefix, every sort key or range with a separator, every index
// partition prefix.
func keyPrefixes() []string {
	var out []string
	for _, f := range table.Families {
		if !f.Exact {
			out = append(out, f.PK)
		}
		for _, sk := range f.SK {
			if strings.Contains(sk.Prefix, "#") {
				out = append(out, sk.Prefix)
			}
		}
		for _, ix := range f.Indexes {
			if strings.HasSuffix(ix.Prefix, "#") {
				out = append(out, ix.Prefix)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keyDirs are the directories the key rule covers, from internal/hub.
var keyDirs = []string{".", "../webhook", "../opview", "../admincli", "../../functions", "../../functions/lambdafn", "../../functions/lambdahttp", "../../cmd/agentbox"}

func TestStructureNoKeyLiterals(t *testing.T) {
	prefixes := keyPrefixes()
	if len(prefixes) < 10 {
		t.Fatalf("only %d key prefixes from table.Families: %q", len(prefixes), prefixes)
	}
	fset := token.NewFileSet()
	for _, dir := range keyDirs {
		if _, err := os.Stat(dir); err != nil {
			continue // a package not (or no longer) in the tree
		}
		for _, f := range parseDir(t, fset, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					s, err := strconv.Unquote(n.Value)
					if err != nil {
						return true
					}
					for _, p := range prefixes {
						if strings.HasPrefix(s, p) {
							t.Errorf("%s: key literal %q outside package table (prefix %q): build it there", fset.Position(n.Pos()), s, p)
						}
					}
				case *ast.CompositeLit:
					if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Key" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "store" {
							t.Errorf("%s: store.Key literal outside package table: build the key there", fset.Position(n.Pos()))
						}
					}
				}
				return true
			})
		}
	}
}

// checksConditionFailed reports whether n mentions a failed condition:
// store.ConditionFailed(...) or *store.ConditionFailedError.
func checksConditionFailed(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "store" &&
				(sel.Sel.Name == "ConditionFailed" || sel.Sel.Name == "ConditionFailedError") {
				found = true
			}
		}
		return !found
	})
	return found
}

// mentionsLen reports whether e calls len.
func mentionsLen(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "len" {
				found = true
			}
		}
		return !found
	})
	return found
}

func TestStructureRetryOnlyInKernel(t *testing.T) {
	fset := token.NewFileSet()
	for name, f := range parseDir(t, fset, ".") {
		if slices.Contains(kernelFiles, name) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			// A retry loop counts attempts (for range n, for i := 0;
			// i < n; i++) or runs until done (for {}); a loop over
			// items (for _, x := range xs) or over chunks of them
			// (i < len(xs)) is not one.
			var body *ast.BlockStmt
			switch n := n.(type) {
			case *ast.ForStmt:
				if n.Cond != nil && mentionsLen(n.Cond) {
					return true
				}
				body = n.Body
			case *ast.RangeStmt:
				if n.Key != nil || n.Value != nil {
					return true
				}
				body = n.Body
			default:
				return true
			}
			if checksConditionFailed(body) {
				t.Errorf("%s: a loop that checks a failed condition outside the kernel: use retry (kernel.go) and answer errContended", fset.Position(n.Pos()))
				return false
			}
			return true
		})
	}
}

func TestStructureCapabilitiesKeepToThemselves(t *testing.T) {
	fset := token.NewFileSet()
	files := parseDir(t, fset, ".")
	for _, k := range append(slices.Clone(kernelFiles), sharedFiles...) {
		if _, ok := files[k]; !ok {
			t.Errorf("kernel or shared file %s does not exist: update the list", k)
		}
	}
	// Each top-level unexported name (functions, types, vars, consts;
	// methods resolve through their type, which the parser does not
	// know) → the file declaring it.
	declaredIn := map[string]string{}
	for name, f := range files {
		for _, o := range f.Scope.Objects {
			if !ast.IsExported(o.Name) && o.Name != "_" {
				declaredIn[o.Name] = name
			}
		}
	}
	allowed := map[string]bool{}
	for _, u := range crossUses {
		allowed[u] = true
	}
	used := map[string]bool{}
	for name, f := range files {
		// Names the parser left unresolved in a file are the package
		// level names of other files (or the universe's).
		for _, id := range f.Unresolved {
			from, ok := declaredIn[id.Name]
			if !ok || from == name || slices.Contains(kernelFiles, from) || slices.Contains(sharedFiles, from) {
				continue
			}
			use := name + " -> " + id.Name
			used[use] = true
			if !allowed[use] {
				t.Errorf("%s: %s uses %s of %s, another capability's unexported name: move it to the kernel, a shared file or package table", fset.Position(id.Pos()), name, id.Name, from)
			}
		}
	}
	var stale []string
	for _, u := range crossUses {
		if !used[u] {
			stale = append(stale, u)
		}
	}
	sort.Strings(stale)
	for _, u := range stale {
		t.Errorf("crossUses lists %q, which is no longer used: remove it", u)
	}
}
