package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	rules []rule // one per keyword, type first; all must pass
}

// A rule is one compiled keyword: it returns nil when v, found at the JSON
// pointer at, passes.
type rule func(v any, at string) error

// annotations are keywords that Ajv's strict mode accepts and that never
// change a verdict.
var annotations = map[string]bool{
	"description": true, "title": true, "$comment": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// needsType names the value type each type-specific keyword applies to.
// Ajv's strictTypes refuses such a keyword where no type in force at that
// spot makes it apply.
var needsType = map[string]string{
	"required": "object", "properties": "object", "additionalProperties": "object",
	"minLength": "string", "maxLength": "string", "pattern": "string",
	"minimum": "number", "maximum": "number",
}

var jsonTypes = []string{"null", "boolean", "object", "array", "number", "integer", "string"}

// Compile reads a JSON schema and compiles it, refusing anything outside
// the subset this package implements (see the package documentation).
func Compile(schema []byte) (*Schema, error) {
	v, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: the schema is not JSON: %w", err)
	}
	return compile(v, "#", "")
}

// CompileWrapped compiles the schema under the "schema" key of a file
// shaped like those in conformance/vectors; the file's other keys are
// ignored.
func CompileWrapped(file []byte) (*Schema, error) {
	var w struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(file, &w); err != nil {
		return nil, fmt.Errorf("jsonschema: the schema file is not JSON: %w", err)
	}
	if w.Schema == nil {
		return nil, errors.New(`jsonschema: the schema file has no "schema" key`)
	}
	return Compile(w.Schema)
}

// Validate reports whether instance, one JSON value, satisfies the schema:
// nil when it does, otherwise an error naming the first failing keyword and
// the JSON pointer of the value at fault. Text that is not exactly one JSON
// value is an error too.
func (s *Schema) Validate(instance []byte) error {
	v, err := decode(instance)
	if err != nil {
		return fmt.Errorf("jsonschema: the instance is not JSON: %w", err)
	}
	return s.check(v, "")
}

func (s *Schema) check(v any, at string) error {
	for _, r := range s.rules {
		if err := r(v, at); err != nil {
			return err
		}
	}
	return nil
}

// fail describes a failure of keyword at the instance location at.
func fail(at, keyword, format string, args ...any) error {
	return fmt.Errorf("jsonschema: at %q: %s: %s", at, keyword, fmt.Sprintf(format, args...))
}

// failIf is fail when failed is true, and nil otherwise.
func failIf(failed bool, at, keyword, format string, args ...any) error {
	if !failed {
		return nil
	}
	return fail(at, keyword, format, args...)
}

// compile builds the schema v found at schema location where. ctx is the
// type an enclosing schema already fixed for the same value, or "".
func compile(v any, where, ctx string) (*Schema, error) {
	if b, ok := v.(bool); ok {
		if b {
			return &Schema{}, nil
		}
		return &Schema{rules: []rule{func(_ any, at string) error {
			return fail(at, "false", "no value is allowed here")
		}}}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("jsonschema: %s: a schema must be an object or a boolean", where)
	}
	s := &Schema{}
	if t, ok := m["type"]; ok {
		typ, _ := t.(string)
		switch {
		case !slices.Contains(jsonTypes, typ):
			return nil, fmt.Errorf("jsonschema: %s: \"type\" must name one JSON type (type arrays are not supported)", where)
		case ctx != "" && ctx != typ && !(ctx == "number" && typ == "integer"):
			return nil, fmt.Errorf("jsonschema: %s: type %q contradicts the type %q set around it", where, typ, ctx)
		}
		ctx = typ
		s.rules = append(s.rules, func(v any, at string) error {
			return failIf(!hasType(v, typ), at, "type", "must be %s", typ)
		})
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "type" || annotations[k] {
			continue
		}
		if need, ok := needsType[k]; ok && ctx != need && !(need == "number" && ctx == "integer") {
			return nil, fmt.Errorf("jsonschema: %s: %q needs a type %q in force here (Ajv strictTypes)", where, k, need)
		}
		r, err := keyword(k, m, where, ctx)
		if err != nil {
			return nil, err
		}
		s.rules = append(s.rules, r)
	}
	return s, nil
}

// keyword compiles keyword k of the schema object m.
func keyword(k string, m map[string]any, where, ctx string) (rule, error) {
	val := m[k]
	bad := func(want string) error { return fmt.Errorf("jsonschema: %s: %q must be %s", where, k, want) }
	switch k {
	case "const":
		return func(v any, at string) error {
			return failIf(!equal(v, val), at, k, "must equal the constant")
		}, nil
	case "enum":
		list, ok := val.([]any)
		if !ok || len(list) == 0 || hasDuplicate(list) {
			return nil, bad("a non-empty array of distinct values")
		}
		return func(v any, at string) error {
			found := slices.ContainsFunc(list, func(e any) bool { return equal(v, e) })
			return failIf(!found, at, k, "must equal one of %d values", len(list))
		}, nil
	case "required":
		list, ok := val.([]any)
		if !ok || hasDuplicate(list) || slices.ContainsFunc(list, func(e any) bool { _, ok := e.(string); return !ok }) {
			return nil, bad("an array of distinct strings")
		}
		return on(func(o map[string]any, at string) error {
			for _, name := range list {
				if _, ok := o[name.(string)]; !ok {
					return fail(at, k, "property %q is missing", name)
				}
			}
			return nil
		}), nil
	case "properties", "additionalProperties":
		subs := map[string]*Schema{}
		var extra *Schema
		var err error
		if k == "additionalProperties" {
			extra, err = compile(val, where+"/"+k, "")
		} else if pm, ok := val.(map[string]any); !ok {
			return nil, bad("an object")
		} else {
			for name, sub := range pm {
				if subs[name], err = compile(sub, where+"/properties/"+pointerEscape(name), ""); err != nil {
					break
				}
			}
		}
		declared, _ := m["properties"].(map[string]any)
		return on(func(o map[string]any, at string) error {
			names := make([]string, 0, len(o))
			for name := range o {
				names = append(names, name)
			}
			slices.Sort(names) // so that the first failure reported is stable
			for _, name := range names {
				sub := subs[name]
				if _, ok := declared[name]; extra != nil && !ok {
					sub = extra
				}
				if sub != nil {
					if err := sub.check(o[name], at+"/"+pointerEscape(name)); err != nil {
						return err
					}
				}
			}
			return nil
		}), err
	case "minLength", "maxLength":
		n, ok := val.(float64)
		if !ok || n < 0 || n != math.Trunc(n) {
			return nil, bad("a non-negative integer")
		}
		return on(func(s string, at string) error {
			c := float64(utf8.RuneCountInString(s))
			return failIf(k == "minLength" && c < n || k == "maxLength" && c > n, at, k, "%v code points where the limit is %v", c, n)
		}), nil
	case "minimum", "maximum":
		n, ok := val.(float64)
		if !ok || math.IsInf(n, 0) {
			return nil, bad("a finite number")
		}
		return on(func(x float64, at string) error {
			// Like Ajv with strictNumbers, limits skip infinite values.
			return failIf(!math.IsInf(x, 0) && (k == "minimum" && x < n || k == "maximum" && x > n), at, k, "%v is beyond the limit %v", x, n)
		}), nil
	case "pattern":
		p, ok := val.(string)
		if !ok {
			return nil, bad("a string")
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, bad(fmt.Sprintf("a regular expression RE2 accepts (%v)", err))
		}
		return on(func(s string, at string) error {
			return failIf(!re.MatchString(s), at, k, "does not match %s", p)
		}), nil
	case "oneOf", "anyOf", "not":
		list, ok := val.([]any)
		if k == "not" {
			list, ok = []any{val}, true
		}
		if !ok || len(list) == 0 {
			return nil, bad("a non-empty array of schemas")
		}
		subs := make([]*Schema, len(list))
		for i, sub := range list {
			loc := fmt.Sprintf("%s/%s/%d", where, k, i)
			if k == "not" {
				loc = where + "/not"
			}
			var err error
			if subs[i], err = compile(sub, loc, ctx); err != nil {
				return nil, err
			}
		}
		return func(v any, at string) error {
			matched := 0
			for _, sub := range subs {
				if sub.check(v, at) == nil {
					matched++
				}
			}
			return failIf(k == "oneOf" && matched != 1 || k == "anyOf" && matched == 0 || k == "not" && matched != 0, at, k, "%d of %d schemas match", matched, len(subs))
		}, nil
	}
	return nil, fmt.Errorf("jsonschema: %s: unknown keyword %q", where, k)
}

// on makes a rule that checks only values of type T and lets others pass,
// as JSON Schema's type-specific keywords do.
func on[T any](f func(x T, at string) error) rule {
	return func(v any, at string) error {
		if x, ok := v.(T); ok {
			return f(x, at)
		}
		return nil
	}
}

// hasType is Ajv's type test with strictNumbers: an infinite value, which
// is what JSON.parse makes of a number too large for a double, is not a
// number.
func hasType(v any, typ string) bool {
	switch x := v.(type) {
	case nil:
		return typ == "null"
	case bool:
		return typ == "boolean"
	case string:
		return typ == "string"
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	case float64:
		finite := !math.IsInf(x, 0)
		return typ == "number" && finite || typ == "integer" && finite && x == math.Trunc(x)
	}
	return false
}

// equal is deep JSON equality with numbers compared as float64 values.
func equal(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equal)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return a == b // nil, bool, float64 or string: comparable
}

func hasDuplicate(list []any) bool {
	for i := range list {
		for j := range i {
			if equal(list[i], list[j]) {
				return true
			}
		}
	}
	return false
}

// decode reads exactly one JSON value as JSON.parse would: the last of
// duplicate keys wins, and each number becomes the nearest float64.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return toFloats(v), nil
}

func toFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		// The decoder has checked the syntax, so the only error left is a
		// value out of range, for which ParseFloat returns an infinity, as
		// JavaScript does.
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i, e := range x {
			x[i] = toFloats(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = toFloats(e)
		}
	}
	return v
}

// pointerEscape escapes a property name for use in a JSON pointer.
var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1").Replace
