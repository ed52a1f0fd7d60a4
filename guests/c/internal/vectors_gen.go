//go:build ignore

// vectors_gen prints test vectors for the C guests' helpers (strconv.h,
// text.h, jsonscan.h), computed with the Go standard library that the Go
// guests use, so that internal_test.c can check the C ports give the same
// answers. The vectors are random but reproducible (fixed seed). Run by
// guests/c/test.sh:
//
//	go run vectors_gen.go | ./internal_test
//
// Each line is a kind letter and tab-separated fields; byte strings are hex.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"unicode"
)

var w = bufio.NewWriter(os.Stdout)

func h(b []byte) string { return hex.EncodeToString(b) }

func main() {
	defer w.Flush()
	r := rand.New(rand.NewSource(1))
	floats(r)
	parses(r)
	runes()
	words(r)
	jsons(r)
	ints(r)
	quotes(r)
}

// floats: F bits e-form f-form (strconv.AppendFloat, precision -1).
func floats(r *rand.Rand) {
	emit := func(f float64) {
		fmt.Fprintf(w, "F\t%016x\t%s\t%s\n", math.Float64bits(f),
			strconv.FormatFloat(f, 'e', -1, 64), strconv.FormatFloat(f, 'f', -1, 64))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 0.3, 1e21, 1e-7, 123456789, 5e-324,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 2.225073858507201e-308,
		math.Inf(1), math.Inf(-1), math.NaN(), 9007199254740993, 1.5, 3.5, 20, 60, 1e23, 8.41e21, 5e-310} {
		emit(f)
	}
	for i := 0; i < 20000; i++ {
		emit(math.Float64frombits(r.Uint64()))
	}
	for i := 0; i < 5000; i++ { // "human" numbers: sums and averages
		emit(float64(r.Intn(1000000)) / float64(1+r.Intn(1000)))
		emit(float64(r.Intn(100000)) * math.Pow(10, float64(r.Intn(40)-20)))
	}
}

// parses: P input bits err (strconv.ParseFloat; err 0 ok, 2 range).
func parses(r *rand.Rand) {
	emit := func(s string) {
		f, err := strconv.ParseFloat(s, 64)
		code := 0
		if err != nil {
			if err.(*strconv.NumError).Err == strconv.ErrRange {
				code = 2
			} else {
				code = 1
			}
		}
		fmt.Fprintf(w, "P\t%s\t%016x\t%d\n", h([]byte(s)), math.Float64bits(f), code)
	}
	for _, s := range []string{"0", "-0", "1", "3.5", "-1e3", "1E-7", "0.1", "1e400", "-1e400", "1e-400", "123456789012345678901234567890",
		"0.000000000000000000000000000001", "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9e-324", "2.4703282292062327e-324",
		"2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "9007199254740993",
		"9007199254740992.5", "0.1e1", "100", "1e22", "1e23", "123.456e-5", "00.5", "1e", "abc", "", "-", "1.2.3", "1e+", "+5", "99.5"} {
		emit(s)
	}
	for i := 0; i < 20000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := strconv.FormatFloat(f, 'e', 16+r.Intn(3), 64)
		emit(s)
		// Perturb the last digit to land near halfway points.
		b := []byte(strconv.FormatFloat(f, 'e', 25, 64))
		emit(string(b))
	}
	for i := 0; i < 5000; i++ {
		var b bytes.Buffer
		if r.Intn(2) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.Itoa(r.Intn(1000000)))
		if r.Intn(2) == 0 {
			b.WriteByte('.')
			for j := r.Intn(30) + 1; j > 0; j-- {
				b.WriteByte(byte('0' + r.Intn(10)))
			}
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "e%d", r.Intn(700)-350)
		}
		emit(b.String())
	}
}

// runes: T rune upper, for every rune whose unicode.ToUpper differs; the C
// test checks every other rune maps to itself. S rune for white space.
func runes() {
	for c := rune(0); c <= unicode.MaxRune; c++ {
		if u := unicode.ToUpper(c); u != c {
			fmt.Fprintf(w, "T\t%x\t%x\n", c, u)
		}
		if unicode.IsSpace(c) {
			fmt.Fprintf(w, "S\t%x\n", c)
		}
	}
}

// words: W input word,word,... (bytes.Fields) and U input upper (the upper
// guest's slow path: unicode.ToUpper per rune, invalid bytes kept) and B
// input upper (bytes.ToUpper: invalid bytes become U+FFFD).
func words(r *rand.Rand) {
	alphabet := []string{"a", "b", "Z", " ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028",
		"\u2029", "\u202f", "\u205f", "\u3000", "\u200b", "ß", "é", "ǅ", "ǆ", "ſ", "ﬀ", "ᾳ", "ω", "ꙋ", "𐐨", "😀", "\xff", "\xc3", "\xe2\x80",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "ı", "ǰ", "ͅ", "Ⓐ", "ⓐ", "ꭰ", "x"}
	for i := 0; i < 20000; i++ {
		var b bytes.Buffer
		for j := r.Intn(12); j > 0; j-- {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		s := b.Bytes()
		var ws []string
		for _, f := range bytes.Fields(s) {
			ws = append(ws, h(f))
		}
		fmt.Fprintf(w, "W\t%s\t%s\n", h(s), joinOrDash(ws))
		fmt.Fprintf(w, "B\t%s\t%s\n", h(s), dash(h(bytes.ToUpper(s))))
	}
}

func joinOrDash(ws []string) string {
	if len(ws) == 0 {
		return "-"
	}
	var b bytes.Buffer
	for i, s := range ws {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	return b.String()
}

// jsons: J doc valid field-err found value (json.Valid; the member "amount"
// as json.Unmarshal into map[string]json.RawMessage sees it) and N doc ok tok
// (a JSON number with surrounding white space).
func jsons(r *rand.Rand) {
	seeds := []string{`{"amount": 150}`, " \n{ \"amount\" :\t-1.5e3 , \"x\":1 }\r\n", `{"total": 150}`, `{}`,
		`{"a": {"amount": 500}, "b": 1}`, `{"note": "\"amount\": 500", "amount": 3}`, `{"list": [{"amount": 9}], "z": "amount"}`,
		`{"amount": "150"}`, `{"amount": {"v": 1}}`, `{"amount": 1, "amount": 200}`, `{"\u0061mount": 120}`,
		`{"am\/ount": 120, "amount": 7}`, `{"Amount": 120}`, `[1, 2]`, `42`, `null`, `"{\"amount\": 1}"`, ``, `{"amount": 150`,
		`{"amount": 150,}`, `{"amount": 150} x`, `{} {}`, `{"amount": 01}`, `{"amount": nope}`, "{\"a\": \"x\ty\"}", `{"a": "\x"}`,
		`amount=150`, `{"\ud83d\ude00": 1, "amount": true}`, `{"a\ud83d": 1}`, `{"amount":[1,{"x":"y"}]}`, `[1,"a",null,true,false]`,
		"\"\xff\"", `{"x": "\ud83d\ude00"}`, `{"amount": -0.5e-3}`, `{"amount":1e400}`, `  `, `{"amount" 1}`, `{"amount":}`, `{,}`,
		`[[[[]]]]`, `[[[[]]]`, `{"a":[}`, `tru`, `true`, `false `, `nul`, `"abc`, `"\u12"`, `"\u123g"`, `{"\u0041mount":1,"amount":2}`,
		`{"amoun\u0074":5}`, `{"amount\u0000":5}`, `{"ts": 1700000000123}`, `{"ts": 1.5}`, `{"ts": "17"}`, `{"ts": 99999999999999999999}`,
		`{"ts": -12}`, `{"ts": -0}`, `1.`, `-`, `-01`, `0.0e+0`, `1E5`, `.5`}
	emit := func(doc []byte) {
		valid := json.Valid(doc)
		ferr, found, val := 0, 0, ""
		if !valid {
			ferr = 2
		} else if t := bytes.TrimLeft(doc, " \t\r\n"); t[0] != '{' {
			ferr = 1
		} else {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(doc, &m); err != nil {
				panic(err)
			}
			if v, ok := m["amount"]; ok {
				found, val = 1, h(v)
			}
		}
		v := 0
		if valid {
			v = 1
		}
		fmt.Fprintf(w, "J\t%s\t%d\t%d\t%d\t%s\n", h(doc), v, ferr, found, dash(val))
		// Number: trimmed JSON white space, then exactly one number.
		t := bytes.Trim(doc, " \t\r\n")
		ok := len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') && json.Valid(t)
		tok := ""
		if ok {
			tok = h(t)
			if len(t) > 0 && !isNumberText(t) {
				ok, tok = false, ""
			}
		}
		o := 0
		if ok {
			o = 1
		}
		fmt.Fprintf(w, "N\t%s\t%d\t%s\n", h(doc), o, dash(tok))
	}
	for _, s := range seeds {
		emit([]byte(s))
	}
	pieces := []string{"{", "}", "[", "]", ",", ":", `"amount"`, `"a"`, `"\u0061mount"`, "1", "-2.5e3", "0", "true", "null", " ", "\n",
		`"x\"y"`, `"\ud800"`, "01", "\xff", `"é"`, "1e", "-"}
	for i := 0; i < 30000; i++ {
		var b bytes.Buffer
		for j := r.Intn(10); j > 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		emit(b.Bytes())
	}
}

func isNumberText(t []byte) bool {
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ints: I input rc value (strconv.ParseInt base 10), V input rc value
// (ParseUint); rc 0 ok, 1 syntax, 2 range.
func ints(r *rand.Rand) {
	inputs := []string{"0", "-0", "+5", "17", "-12", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616", "", "-", "+", "1.5", "1e3", "\"17\"", "99999999999999999999",
		"0017", " 1", "1_000"}
	for i := 0; i < 2000; i++ {
		inputs = append(inputs, strconv.FormatInt(r.Int63()>>uint(r.Intn(63)), 10), "-"+strconv.FormatUint(r.Uint64()>>uint(r.Intn(64)), 10),
			strconv.FormatUint(r.Uint64(), 10)+strconv.Itoa(r.Intn(10)))
	}
	code := func(err error) int {
		if err == nil {
			return 0
		}
		if err.(*strconv.NumError).Err == strconv.ErrRange {
			return 2
		}
		return 1
	}
	for _, s := range inputs {
		v, err := strconv.ParseInt(s, 10, 64)
		fmt.Fprintf(w, "I\t%s\t%d\t%d\n", h([]byte(s)), code(err), v)
		u, err := strconv.ParseUint(s, 10, 64)
		fmt.Fprintf(w, "V\t%s\t%d\t%d\n", h([]byte(s)), code(err), u)
	}
}

// quotes: Q input quoted (fmt %q), for the text guests quote (ASCII, Latin
// and CJK text, control bytes, invalid UTF-8).
func quotes(r *rand.Rand) {
	alphabet := []string{"a", "7", " ", "\"", "\\", "\n", "\t", "\x00", "\x7f", "\x1b", "é", "ß", "日", "😀", "\xff", "\xc3", "\u0085", "\u00ad", "\u2028"}
	for i := 0; i < 5000; i++ {
		var b bytes.Buffer
		for j := r.Intn(8); j > 0; j-- {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		fmt.Fprintf(w, "Q\t%s\t%s\n", h(b.Bytes()), h([]byte(fmt.Sprintf("%q", b.Bytes()))))
	}
}
