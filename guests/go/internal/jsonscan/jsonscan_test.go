package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestField(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		value string
		found bool
		err   error
	}{
		{"number", `{"amount": 150}`, "150", true, nil},
		{"whitespace around", " \n{ \"amount\" :\t-1.5e3 , \"x\":1 }\r\n", "-1.5e3", true, nil},
		{"missing", `{"total": 150}`, "", false, nil},
		{"empty object", `{}`, "", false, nil},
		{"nested object does not match", `{"a": {"amount": 500}, "b": 1}`, "", false, nil},
		{"string containing the key", `{"note": "\"amount\": 500", "amount": 3}`, "3", true, nil},
		{"key in an array", `{"list": [{"amount": 9}], "z": "amount"}`, "", false, nil},
		{"string value", `{"amount": "150"}`, `"150"`, true, nil},
		{"object value", `{"amount": {"v": 1}}`, `{"v": 1}`, true, nil},
		{"last duplicate wins", `{"amount": 1, "amount": 200}`, "200", true, nil},
		{"escaped key", `{"\u0061mount": 120}`, "120", true, nil},
		{"escaped slash key", `{"am\/ount": 120, "amount": 7}`, "7", true, nil},
		{"case matters", `{"Amount": 120}`, "", false, nil},
		{"array", `[1, 2]`, "", false, ErrNotObject},
		{"number document", `42`, "", false, ErrNotObject},
		{"null", `null`, "", false, ErrNotObject},
		{"string document", `"{\"amount\": 1}"`, "", false, ErrNotObject},
		{"empty", ``, "", false, ErrSyntax},
		{"truncated", `{"amount": 150`, "", false, ErrSyntax},
		{"trailing comma", `{"amount": 150,}`, "", false, ErrSyntax},
		{"trailing garbage", `{"amount": 150} x`, "", false, ErrSyntax},
		{"two documents", `{} {}`, "", false, ErrSyntax},
		{"bad number", `{"amount": 01}`, "", false, ErrSyntax},
		{"bare word", `{"amount": nope}`, "", false, ErrSyntax},
		{"control character", "{\"a\": \"x\ty\"}", "", false, ErrSyntax},
		{"bad escape", `{"a": "\x"}`, "", false, ErrSyntax},
		{"not json", `amount=150`, "", false, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, found, err := Field([]byte(tt.doc), "amount")
			if !errors.Is(err, tt.err) || found != tt.found || string(v) != tt.value {
				t.Fatalf("Field = %q, %v, %v; want %q, %v, %v", v, found, err, tt.value, tt.found, tt.err)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	good := []string{"0", "-0", "42", "3.5", "-1.25e+10", "1E5", "1e-7", " 7 ", "\n12\t"}
	bad := []string{"", " ", "01", "+1", "1.", ".5", "1e", "1e+", "0x10", "NaN", "Infinity", "1 2", "--1", "\"1\"", "1,"}
	for _, s := range good {
		if _, ok := Number([]byte(s)); !ok {
			t.Errorf("Number(%q) = false", s)
		}
	}
	for _, s := range bad {
		if _, ok := Number([]byte(s)); ok {
			t.Errorf("Number(%q) = true", s)
		}
	}
	if tok, _ := Number([]byte(" 3.5\n")); string(tok) != "3.5" {
		t.Errorf("token %q", tok)
	}
	if IsNumber([]byte(" 1")) || !IsNumber([]byte("-2e3")) {
		t.Error("IsNumber")
	}
}

func TestUnescape(t *testing.T) {
	for raw, want := range map[string]string{
		`plain`:        "plain",
		`a\"b\\c\/d`:   `a"b\c/d`,
		`\b\f\n\r\t`:   "\b\f\n\r\t",
		`\u00e9\u20AC`: "é€",
		`\ud83d\ude00`: "😀",
		`\ud83d`:       "\uFFFD",
		`\ud83dx`:      "\uFFFDx",
		`\ude00\u0041`: "\uFFFDA",
		`\ud83d\u0041`: "\uFFFDA",
	} {
		if got := string(Unescape(nil, []byte(raw))); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", raw, got, want)
		}
		// encoding/json agrees.
		var s string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &s); err != nil || s != want {
			t.Errorf("encoding/json reads %q as %q (%v), want %q", raw, s, err, want)
		}
	}
}

func TestDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if Valid([]byte(deep)) {
		t.Fatal("accepted nesting deeper than MaxDepth")
	}
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if !Valid([]byte(ok)) {
		t.Fatal("refused nesting of MaxDepth")
	}
}

func TestFieldZeroAllocs(t *testing.T) {
	doc := []byte(`{"id": "a1b2c3", "user": {"name": "x", "amount": 1}, "tags": ["p", "q"], "amount": 150.25, "note": "ok"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, found, err := Field(doc, "amount"); !found || err != nil {
			t.Fatal("not found")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

// FuzzField checks Valid and Field against encoding/json.
func FuzzField(f *testing.F) {
	for _, s := range []string{`{"amount": 150}`, `{"a":{"amount":1},"amount":[1,{"x":"y"}]}`, `[1,"a",null,true,false]`,
		`{"\u0061mount": -0.5e-3}`, `{"amount":1,"amount":2}`, "\"\xff\"", `{"x": "\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		valid := json.Valid(doc)
		if Valid(doc) != valid {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", doc, !valid, valid)
		}
		v, found, err := Field(doc, "amount")
		switch {
		case !valid:
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Field(%q): error %v, want ErrSyntax", doc, err)
			}
			return
		case bytes.TrimLeft(doc, " \t\r\n")[0] != '{':
			if !errors.Is(err, ErrNotObject) {
				t.Fatalf("Field(%q): error %v, want ErrNotObject", doc, err)
			}
			return
		case err != nil:
			t.Fatalf("Field(%q): %v", doc, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatalf("encoding/json cannot read %q: %v", doc, err)
		}
		want, ok := m["amount"]
		if found != ok || !bytes.Equal(v, want) {
			t.Fatalf("Field(%q) = %q, %v; encoding/json %q, %v", doc, v, found, want, ok)
		}
	})
}

func TestFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-42", "123456789012345", "-999999999999999", "1234567890123456",
		"99999999999999999999", "3.5", "-1e3", "1E-7", "0.1", "1e400", "-1e400", "-0.0", "150.25", "0.3",
		"12345678901234.5", "0.00000000000001", "0.000000000000001", "1234567890123.456", "9007199254740.993"} {
		got, err := Float([]byte(s))
		want, werr := strconv.ParseFloat(s, 64)
		if (err == nil) != (werr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("Float(%q) = %v, %v; strconv %v, %v", s, got, err, want, werr)
		}
	}
}

func FuzzFloat(f *testing.F) {
	f.Add("12345")
	f.Add("-150.25")
	f.Fuzz(func(t *testing.T, s string) {
		if !IsNumber([]byte(s)) {
			return
		}
		got, err := Float([]byte(s))
		want, werr := strconv.ParseFloat(s, 64)
		if (err == nil) != (werr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Float(%q) = %v, %v; strconv %v, %v", s, got, err, want, werr)
		}
	})
}

func TestInt(t *testing.T) {
	good := map[string]int64{"0": 0, "7": 7, "-42": -42, "123456789012345": 123456789012345, "-999999999999999": -999999999999999}
	for s, want := range good {
		if v, ok := Int([]byte(s)); !ok || v != want {
			t.Errorf("Int(%q) = %d, %v; want %d", s, v, ok, want)
		}
	}
	// Numbers left to Number and Float, and things that are not numbers.
	for _, s := range []string{"-0", " 7", "7 ", "3.5", "1e3", "1234567890123456", "", "-", "01", "-01", "+1", "1a", "0x1", "\"1\""} {
		if v, ok := Int([]byte(s)); ok {
			t.Errorf("Int(%q) = %d, true", s, v)
		}
	}
}

// FuzzInt checks that whatever Int accepts is a JSON number whose value
// Float gives the same.
func FuzzInt(f *testing.F) {
	f.Add("12345")
	f.Add("-0")
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := Int([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if !IsNumber([]byte(s)) || err != nil || math.Float64bits(float64(v)) != math.Float64bits(want) {
			t.Fatalf("Int(%q) = %d; IsNumber %v, strconv %v, %v", s, v, IsNumber([]byte(s)), want, err)
		}
	})
}
