package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryExportedNameDocumented walks the module and fails for an
// exported type, function, method, constant or variable without a doc
// comment, and for a library package without a doc.go (O2).
func TestEveryExportedNameDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dirs[filepath.Dir(path)] = true
		checkFile(t, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		if strings.Contains(filepath.ToSlash(dir), "/cmd/") {
			continue // commands document themselves in main.go
		}
		data, err := os.ReadFile(filepath.Join(dir, "doc.go"))
		if err != nil {
			t.Errorf("O2: %s has no doc.go", dir)
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), "doc.go", data, parser.ParseComments)
		if err != nil || f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") {
			t.Errorf("O2: %s/doc.go does not open with a \"Package %s\" comment", dir, filepath.Base(dir))
		}
	}
}

func checkFile(t *testing.T, path string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	missing := func(pos token.Pos, what string) {
		t.Errorf("O2: %s: exported %s has no doc comment", fset.Position(pos), what)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			missing(d.Pos(), d.Name.Name)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						missing(s.Pos(), s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
							missing(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
}

func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	typ := fl.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// ruleID matches an id of the project's behaviour book, such as F18 or N7.
var ruleID = regexp.MustCompile(`\b[FNRSPLEGO][0-9]{1,2}\b`)

// TestDocsCiteNoRuleIDs fails for a package doc, or the doc of an exported
// name or of an exported struct field, that cites a rule id: the rule book
// is not part of this repository, so godoc states each behaviour in plain
// words, and rule ids stay in tests and commits (O2).
func TestDocsCiteNoRuleIDs(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, c := range exportedDocs(t, path) {
			if m := ruleID.FindString(c.text); m != "" {
				t.Errorf("%s: the doc of %s cites rule id %s; say the behaviour in plain words", c.pos, c.name, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type docText struct {
	pos, name, text string
}

// exportedDocs returns the docs a reader of godoc sees in one file.
func exportedDocs(t *testing.T, path string) []docText {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return nil
	}
	var out []docText
	add := func(pos token.Pos, name string, groups ...*ast.CommentGroup) {
		for _, g := range groups {
			if g != nil {
				out = append(out, docText{fset.Position(pos).String(), name, g.Text()})
			}
		}
	}
	add(f.Package, "package "+f.Name.Name, f.Doc)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				add(d.Pos(), d.Name.Name, d.Doc)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					add(s.Pos(), s.Name.Name, d.Doc, s.Doc)
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							if len(fl.Names) == 0 || fl.Names[0].IsExported() {
								add(fl.Pos(), s.Name.Name+" field", fl.Doc, fl.Comment)
							}
						}
					}
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							add(m.Pos(), s.Name.Name+" method", m.Doc, m.Comment)
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							add(n.Pos(), n.Name, d.Doc, s.Doc, s.Comment)
						}
					}
				}
			}
		}
	}
	return out
}
