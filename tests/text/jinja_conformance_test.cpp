// Construct by construct, our Jinja2 interpreter against Python's jinja2 (set up as Hugging
// Face transformers sets it up): every snippet below renders identically in both, or fails
// in both (with the same message for raise_exception). The expected text comes from Python
// at test time (tests/text/render_reference.py --batch); nothing here is hand-written.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "text/chat_template.h"
#include "text/jinja_reference.h"

namespace cohort {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kConformanceNow = "2025-01-15T10:30:00";

constexpr const char* kContext = R"J({
  "s": "héllo Wörld", "n": null, "i": 7, "f": 2.5, "b": true, "e": "",
  "l": [3, 1, 2], "ws": "  \t pad \n ", "q": "it's \"q\"", "neg": -7,
  "d": {"a": 1, "b": [1, 2], "c": {"x": "y"}},
  "msgs": [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "yo",
     "tool_calls": [{"function": {"name": "f", "arguments": {"k": "v"}}}]}
  ]
})J";

// Templates rendered with kContext.
const char* const kCases[] = {
    // literals and printing
    R"J({{ 'a' ~ "b" ~ 1 ~ 1.5 ~ none ~ true ~ False ~ None }})J",
    R"J({{ "esc\t\n\\ \x41 \u00e9 \101 \q \"" }}|{{ 'single \' quote' }})J",
    R"J({{ 1e3 }} {{ 1_000 }} {{ 0x1F }} {{ 0b101 }} {{ 0o17 }} {{ 1.5e-7 }} {{ 3.0 }} {{ 1/3 }})J",
    R"J({{ 2**0.5 }} {{ 10/4 }} {{ 1e22 }} {{ 123456789.123 }} {{ 0.1 + 0.2 }} {{ 1e16 }})J",
    R"J({{ 1e-5 }} {{ 100.0 }} {{ -0.0 }} {{ 1e300 * 1e10 }} {{ -1e300 * 1e10 }} {{ 1e15 }})J",
    R"J({{ [1, 'a', none, true, 1.5, (1,), {'k': "it's"}, []] }})J",
    R"J({{ {'a': 1, 'b': [1, 2], 3: 'x'} }} {{ {1: 'a', 1.0: 'b', true: 'c'} }})J",
    R"J({{ (1, 2) }}|{{ () }}|{{ 1, 2 }}|{{ ('a',) }}|{{ [1, [2, [3]]] }})J",
    R"J({{ d }}|{{ l }}|{{ n }}|{{ b }}|{{ f }}|{{ msgs[2] }}|{{ msgs[0] }})J",
    R"J({{ q }}|{{ [q] }}|{{ ["a'b"] }}|{{ ['a"b'] }}|{{ ["\n\t\\"] }}|{{ [s] }})J",
    R"J({{ ["\x01", "\x7f", "é", "\u2028"] }})J",
    R"J({{ 'a' 'b' "c" }})J",
    // arithmetic
    R"J({{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }})J",
    R"J({{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 7 % -3 }})J",
    R"J({{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [1] * 3 }})J",
    R"J({{ [1, 2] + [3] }} {{ true + 1 }} {{ (1, 2) + (3,) }} {{ 'x' * 0 }} {{ 2.5 * 2 }})J",
    R"J({{ 1 + 'a' }})J",
    R"J({{ 'a' + 1 }})J",
    R"J({{ 1 / 0 }})J",
    R"J({{ 1 // 0 }})J",
    R"J({{ undefined_var + 1 }})J",
    R"J({{ -i }} {{ +i }} {{ -f }} {{ not i }} {{ not n }} {{ - - i }})J",
    R"J({{ ('a' ~ 1) ~ (1 + 2) }})J",
    R"J({{ 'a' ~ 1 + 2 }})J",
    R"J({{ -1|abs }} {{ l|length - 1 }} {{ 'a' ~ l|length }} {{ not l|length }} {{ 2 * l|length }})J",
    // comparisons and logic
    R"J({{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }})J",
    R"J({{ 1 != 2 }} {{ none == none }} {{ true == 1 }} {{ l == [3, 1, 2] }} {{ d == {'a': 1} }})J",
    R"J({{ (1, 2) == [1, 2] }} {{ 'a' >= 'a' }} {{ 2 >= 1.5 }} {{ 'B' < 'a' }} {{ 'é' > 'z' }})J",
    R"J({{ 'a' in 'cat' }} {{ 3 in l }} {{ 'a' in d }} {{ 'z' not in d }} {{ 1 in undefined_var }})J",
    R"J({{ not 'x' in 'abc' }} {{ (1, 2) in [(1, 2)] }} {{ 'ell' in s }})J",
    R"J({{ 1 < 'a' }})J",
    R"J({{ 1 in 'abc' }})J",
    R"J({{ 0 or 'x' }} {{ 1 and 'y' }} {{ none or [] }} [{{ '' and 1 }}] {{ n is none and i > 3 }})J",
    R"J({{ (i > 3) or undefined_var.x }} {{ i > 3 and 'big' or 'small' }})J",
    R"J({{ 'yes' if b else 'no' }} {{ 'yes' if n else 'no' }} [{{ 'x' if false }}])J",
    R"J({{ 1 if false else 2 if false else 3 }} {{ s if s is defined else 'none' }})J",
    // attribute and item lookup
    R"J({{ d.a }} {{ d['a'] }} {{ d.c.x }} {{ d['c']['x'] }} {{ l[0] }} {{ l[-1] }} {{ l.0 }})J",
    R"J({{ s[0] }} {{ s[1] }} {{ s[-1] }} [{{ 'abc'[5] }}] [{{ l['x'] }}] [{{ d[none] }}])J",
    R"J([{{ d.missing }}] [{{ d['missing'] }}] [{{ l[10] }}] [{{ n.x }}] [{{ s.nope }}])J",
    R"J({{ d.missing is defined }} {{ n.x is defined }} {{ d[[1]] is defined }})J",
    R"J({{ d.missing.x }})J",
    R"J({{ undefined_var.x }})J",
    R"J({{ undefined_var['x'] }})J",
    R"J({{ d.items is defined }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.get('a') }})J",
    R"J({{ d.get('zz') }} {{ d.get('zz', 5) }} {{ d.items()|list }})J",
    R"J({% set dd = {'items': 1, 'keys': 2} %}{{ dd['items'] }} {{ dd.keys()|list }})J",
    R"J({{ msgs[2].tool_calls[0].function.arguments.k }} {{ msgs[2]['tool_calls'][0]['function']['name'] }})J",
    // slicing
    R"J({{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ s[1:4] }} {{ s[::-1] }})J",
    R"J({{ s[-3:] }} {{ l[5:] }} {{ (1,2,3)[1:] }} {{ l[None:2] }} {{ msgs[1:]|length }})J",
    R"J({{ l[::0] }})J",
    // str methods
    R"J({{ ws.strip() }}|{{ ws.lstrip() }}|{{ ws.rstrip() }}|{{ 'xxhixx'.strip('x') }})J",
    R"J({{ '\n\nab\n'.strip('\n') }}|{{ 'abc'.rstrip('c') }}|{{ '\u3000x\xa0'.strip() }})J",
    R"J({{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }})J",
    R"J({{ 'a b c'.rsplit(' ', 1) }} {{ ''.split(',') }} {{ ''.split() }} {{ ' a b '.split(None, 1) }})J",
    R"J({{ 'a<think>b</think>c'.split('</think>')[-1] }} {{ s.split('l') }})J",
    R"J({{ s.startswith('hé') }} {{ s.endswith(('x', 'ld')) }} {{ s.upper() }} {{ s.lower() }})J",
    R"J({{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ s.replace('l', 'L') }})J",
    R"J({{ s.replace('l', 'L', 1) }} {{ s.find('W') }} {{ s.find('zz') }} {{ 'banana'.count('an') }})J",
    R"J({{ 'a\nb\r\nc'.splitlines() }} {{ '-'.join(['a', 'b']) }} {{ '{} and {}'.format(1, 'x') }})J",
    R"J({{ '{name}!'.format(name='Bob') }} {{ '{0}{1}{0}'.format('a', 'b') }})J",
    R"J({{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ '  '.isspace() }} {{ 'ABC'.isupper() }})J",
    R"J({{ 'abc'.islower() }} {{ ''.isdigit() }} {{ 'a1'.isalnum() }} {{ s.rfind('l') }})J",
    R"J({{ 'abc'.startswith('bc', 1) }} {{ 'abc'.index('c') }})J",
    R"J({{ 'abc'.index('z') }})J",
    // filters
    R"J({{ ws|trim }}|{{ 'xxaxx'|trim('x') }}|{{ s|length }}|{{ l|length }}|{{ d|count }})J",
    R"J({{ undefined_var|length }} {{ l|join(', ') }}|{{ l|join }}|{{ [1, none, 'a']|join('-') }})J",
    R"J({{ msgs|join(',', attribute='role') }})J",
    R"J({{ l|first }} {{ l|last }} {{ s|first }} {{ d|first }} [{{ []|first }}])J",
    R"J({{ l|list }} {{ s|list }} {{ d|list }} {{ (1,2)|list }} {{ undefined_var|list }})J",
    R"J({{ l|sort }} {{ l|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }})J",
    R"J({{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ msgs|sort(attribute='role')|map(attribute='role')|list }})J",
    R"J({{ [{'a': 2, 'b': 1}, {'a': 1, 'b': 2}]|sort(attribute='a,b') }})J",
    R"J({{ d|dictsort }} {{ {'b': 1, 'A': 2}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }})J",
    R"J({{ {'b': 1, 'a': 2}|dictsort(reverse=true) }})J",
    R"J({{ [1, 2, 1, 3]|unique|list }} {{ ['a', 'A', 'b']|unique|list }} {{ l|reverse|list }} {{ s|reverse }})J",
    R"J({{ l|min }} {{ l|max }} {{ l|sum }} {{ [1.5, 2]|sum }} {{ ['b', 'C', 'a']|max }} {{ []|max }})J",
    R"J({{ msgs|map(attribute='role')|list }} {{ ['a', 'b']|map('upper')|list }})J",
    R"J({{ msgs|map(attribute='nope', default='dflt')|list }} {{ [[1, 2], [3]]|map('length')|list }})J",
    R"J({{ msgs|selectattr('role', 'equalto', 'user')|list }})J",
    R"J({{ msgs|rejectattr('role', 'eq', 'user')|map(attribute='role')|list }})J",
    R"J({{ msgs|selectattr('tool_calls', 'defined')|list|length }} {{ msgs|selectattr('tool_calls')|list|length }})J",
    R"J({{ [0, 1, 2, none]|select|list }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }})J",
    R"J({{ msgs|selectattr('tool_calls', 'undefined')|map(attribute='role')|join(',') }})J",
    R"J({{ [1, 5, 9]|select('gt', 4)|list }} {{ ['a', 'bb']|select('in', ['bb'])|list }})J",
    R"J({{ n|default('dflt') }} {{ undefined_var|default('dflt') }} [{{ e|default('dflt') }}])J",
    R"J({{ e|default('dflt', true) }} {{ undefined_var|d('x') }} {{ none|d('x', boolean=true) }} [{{ undefined_var|d }}])J",
    R"J({{ '42'|int }} {{ '42.7'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ 3.9|int }} {{ ' 12 '|int }})J",
    R"J({{ '1A'|int(0, 16) }} {{ '3.5'|float }} {{ 'x'|float }} {{ 2|float }} {{ true|int }} {{ -3.9|int }})J",
    R"J({{ 1|string }} {{ none|string }} {{ [1]|string }} {{ d|string }} {{ 1.0|string ~ 'x' }})J",
    R"J({{ 'hello world'|title }} {{ 'hello-world (x)'|title }} {{ 'HELLO'|lower }} {{ 'hello'|upper }})J",
    R"J({{ 'hello WORLD'|capitalize }} {{ 'ÉCOLE'|lower }} {{ 'école'|upper }})J",
    R"J({{ 'a-b-c'|replace('-', '+') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 1|replace('1', '2') }})J",
    R"J({{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }})J",
    R"J({{ 'x\ny'|indent('>> ', first=true) }}|{{ ''|indent }}|{{ 'a\n'|indent }})J",
    R"J({{ -3|abs }} {{ (-3)|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }})J",
    R"J({{ 2.1|round(0, 'ceil') }} {{ 2.9|round(method='floor') }} {{ 5|round }} {{ 1234.5678|round(2) }})J",
    R"J({{ d|items|list }} {{ undefined_var|items|list }})J",
    R"J({{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3]|batch(2, 0)|list }} {{ 'a b  c'|wordcount }})J",
    R"J({{ '<a>'|e }} {{ '<a>'|escape }} {{ ('<a>'|safe) + '<b>' }} {{ '<b>' + ('<a>'|safe) }})J",
    R"J({{ ('<a>'|safe) ~ '<b>' }} {{ '<x>'|safe|e }} {{ "'\""|e }} {{ ('<a>'|safe|trim) + '&' }})J",
    R"J({{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ [1.0, 'é', "\u0001\x7f", none, true, 1e100]|tojson }})J",
    R"J({{ {'a': [], 'b': {}}|tojson(indent=4) }}|{{ d|tojson(separators=(',', ':')) }})J",
    R"J({{ d|tojson(indent=2, separators=(', ', ': ')) }}|{{ 'é😀'|tojson(ensure_ascii=true) }})J",
    R"J({{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ s|tojson }}|{{ (1, 2)|tojson }})J",
    R"J({{ {1: 2, none: 3, true: 4, 1.5: 5}|tojson }}|{{ msgs|tojson }}|{{ d|tojson(indent='\t') }})J",
    R"J({{ "a\"b\\c\n\r\t\b\f"|tojson }} {{ 0.1|tojson }} {{ 1e16|tojson }} {{ -5|tojson }})J",
    R"J({{ d|tojson(indent=0) }})J",
    R"J({{ undefined_var|tojson }})J",
    R"J({{ d|attr('a') }}|{{ namespace(x=1)|attr('x') }}|{{ d|attr('items') is defined }})J",
    // tests
    R"J({{ n is none }} {{ i is number }} {{ f is float }} {{ i is integer }} {{ b is boolean }})J",
    R"J({{ b is true }} {{ false is false }} {{ s is string }} {{ d is mapping }} {{ l is iterable }})J",
    R"J({{ s is iterable }} {{ i is iterable }} {{ l is sequence }} {{ d is sequence }} {{ i is sequence }})J",
    R"J({{ undefined_var is defined }} {{ undefined_var is undefined }} {{ n is defined }} {{ b is number }})J",
    R"J({{ b is integer }} {{ f is number }} {{ n is iterable }} {{ n is mapping }} {{ undefined_var is iterable }})J",
    R"J({{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 'a' is in 'abc' }})J",
    R"J({{ 2 is in l }} {{ i is eq 7 }} {{ i is equalto 7 }} {{ i is ne 7 }} {{ i is lt 8 }} {{ i is gt 8 }})J",
    R"J({{ i is ge 7 }} {{ i is le 6 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ n is sameas none }})J",
    R"J({{ range is callable }} {{ i is not none }} {{ i is not string }} {{ d.items is callable }})J",
    R"J({{ 'x' is escaped }} {{ ('x'|safe) is escaped }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }})J",
    R"J({{ i is greaterthan 3 }} {{ i is lessthan 3 }} {{ l is sameas l }})J",
    R"J({{ x is nosuchtest }})J",
    R"J({{ x|nosuchfilter }})J",
    // for loops
    R"J({% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}:{{ x }};{% endfor %})J",
    R"J({% for x in l %}[{{ loop.previtem }}|{{ loop.nextitem }}|{{ loop.previtem is defined }}]{% endfor %})J",
    R"J({% for x in [] %}a{% else %}empty{% endfor %}{% for x in l if x > 5 %}a{% else %}none{% endfor %})J",
    R"J({% for x in l if x > 1 %}{{ loop.index }}/{{ loop.length }}={{ x }} {% endfor %})J",
    R"J({% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d|items %}{{ k }};{% endfor %}{% for k in d %}{{ k }}{% endfor %})J",
    R"J({% for (a, b) in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}{% for a, b in ['xy', 'zw'] %}{{ b }}{% endfor %})J",
    R"J({% for c in 'héllo' %}{{ c }}.{% endfor %})J",
    R"J({% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %})J",
    R"J({% for a in [1, 2] %}{% set outer = loop %}{% for b in 'xy' %}{{ outer.index }}{{ loop.index }}{{ b }} {% endfor %}{% endfor %})J",
    R"J({% for x in l %}{{ loop.cycle('odd', 'even') }} {% endfor %}{{ loop is defined }})J",
    R"J({% set x = 1 %}{% for i in l %}{% set x = i %}{{ x }}{% endfor %}{{ x }})J",
    R"J({% for m in msgs %}{{ m.role }}{% if not loop.last %},{% endif %}{% endfor %})J",
    R"J({% for m in msgs[::-1] %}{% set idx = (msgs|length - 1) - loop.index0 %}{{ idx }}{{ m.role[0] }}{% endfor %})J",
    R"J({% for a, b in [1, 2] %}{% endfor %})J",
    R"J({% for x in n %}{% endfor %})J",
    R"J({% for x in i %}{% endfor %})J",
    R"J({% break %})J",
    // set and namespace
    R"J({% set ns = namespace(total=0, items=[]) %}{% for i in l %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }} {{ ns.items }})J",
    R"J({% set ns = namespace() %}{% set ns.a = 1 %}{{ ns.a }} {{ ns.b is defined }} {{ ns }})J",
    R"J({% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }} {{ namespace(a=1).a }} {{ ns['a'] }})J",
    R"J({% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (3, 4) %}{% set c, e2 = t %}{{ c + e2 }})J",
    R"J({% set x %}Hello {{ s }}!{% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }})J",
    R"J({% set x = 1 %}{% set x.y = 2 %})J",
    R"J({% set a, b = [1, 2, 3] %})J",
    // if
    R"J({% for v in [0, 1, 2, 3] %}{% if v == 0 %}zero{% elif v == 1 %}one{% elif v == 2 %}two{% else %}many{% endif %} {% endfor %})J",
    R"J({% if undefined_var %}a{% elif n %}b{% else %}c{% endif %}{% if l %}L{% endif %}{% if d.missing %}M{% endif %})J",
    // macros, call, filter, with
    R"J({% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet(name='Zed', greeting='Yo') }} [{{ greet() }}])J",
    R"J({% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }})J",
    R"J({% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }})J",
    R"J({% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}inner {{ s }}{% endcall %})J",
    R"J({% macro each(items) %}{% for it in items %}{{ caller(it) }}{% endfor %}{% endmacro %}{% call(x) each(l) %}[{{ x }}]{% endcall %})J",
    R"J({% filter upper %}abc {{ s }}{% endfilter %}|{% filter trim|upper %}  x  {% endfilter %})J",
    R"J({% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}])J",
    R"J({% macro t() %}object{% endmacro %}{{ t() == 'object' }} {{ t()|length }} {{ t() + '!' }})J",
    R"J({% macro show() %}{{ later }}{% endmacro %}{% set later = 'L' %}{{ show() }})J",
    R"J({% macro a() %}A{{ b() }}{% endmacro %}{% macro b() %}B{% endmacro %}{{ a() }})J",
    R"J({% macro m() %}{% set q = 1 %}{{ q }}{% endmacro %}{{ m() }}[{{ q }}])J",
    R"J({% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }} {{ caller is defined }})J",
    R"J({% macro m() -%}
  x
{%- endmacro %}[{{ m() }}])J",
    // globals
    R"J({{ raise_exception('boom ' ~ i) }})J",
    R"J(before{% if i > 3 %}{{ raise_exception("Conversation roles must alternate") }}{% endif %})J",
    R"J({{ strftime_now('%Y-%m-%d %H:%M:%S | %d %b %Y | %A %a %B %j %y %I %p') }})J",
    R"J({{ range(5)|list }} {{ range(2, 8, 2)|list }} {{ range(5, 0, -1)|list }} {{ range(0)|list }})J",
    R"J({{ range(100001)|length }})J",
    R"J({{ dict(a=1, b='x') }} {{ dict() }} {{ dict([('k', 1)]) }})J",
    // undefined
    R"J([{{ undefined_var }}] {{ undefined_var == undefined_var }} {% for x in undefined_var %}x{% endfor %} {{ undefined_var ~ 'a' }})J",
    R"J({{ undefined_var() }})J",
    R"J({{ i() }})J",
    R"J({{ undefined_var < 1 }})J",
    // whitespace control
    "a  {%- if true -%}  b  {%- endif -%}  c",
    "a {{- ' x ' -}} b",
    "a\n{% if true %}\nb\n{% endif %}\nc",
    "a\n    {% if true %}\n    b\n    {% endif %}\nc",
    "a  {% if true %}b{% endif %}",
    "a\n    {%+ if true %}\nb{% endif +%}\nc",
    "a\n  {# comment #}\nb {#- x -#} c\n{# multi\nline #}\nd",
    "{% raw %}{{ not evaluated }}{% endraw %}|  {% raw %}\n{{x}}\n  {% endraw %}\nafter",
    "abc\n",
    "abc\n\n",
    "a\r\nb\r\n{% if true %}\r\nc{% endif %}\r\n",
    "{{ 'a' }}\nb\n  {{ 'c' }}",
    "{%- if true %}\n  x\n{%- endif %}\n",
    "x\n\t{% if true %}\t\n  y\n{% endif %}  \nz",
    "{% for x in l %}\n  {{ x }}\n{% endfor %}\n",
    "{% for x in l -%}\n  {{ x }}\n{%- endfor %}",
    "  {%- set a = 1 %}\n  {{ a }}",
    "{{ 'a' }} {# c #} {{ 'b' }}",
    "{# c #}\n  {% if true %}x{% endif %}",
    // syntax errors
    "{% if %}x{% endif %}",
    "{% for x in %}{% endfor %}",
    "{{ 1 + }}",
    "{% endif %}",
    "{% if true %}unclosed",
    "{{ (1 }}",
    "{% unknown %}",
    "{{ 'unterminated }}",
    "{# unterminated comment",
    "{{ 1 }",
};

TEST(JinjaConformance, SnippetsMatchPythonJinja2) {
  if (auto why = testing::reference_unavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  testing::TempDir dir;
  const json context = json::parse(kContext);
  json cases = json::array();
  for (const char* t : kCases) cases.push_back({{"template", t}, {"context", context}});
  const std::string cases_path = dir.file("cases.json");
  {
    std::ofstream f(cases_path, std::ios::binary);
    f << cases.dump();
  }
  auto r = testing::render_reference_batch(cases_path, kConformanceNow);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json expected = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(expected.is_array());
  ASSERT_EQ(expected.size(), std::size(kCases));

  text::RenderOptions opts;
  opts.now = *text::parse_local_time(kConformanceNow);
  int ok_both = 0;
  int failed_both = 0;
  for (size_t i = 0; i < std::size(kCases); ++i) {
    SCOPED_TRACE("case " + std::to_string(i) + ": " + kCases[i]);
    const bool want_ok = expected[i]["ok"].get<bool>();
    const std::string want = expected[i]["out"].get<std::string>();
    auto got = text::render_chat_template(kCases[i], context, opts);
    if (want_ok) {
      EXPECT_TRUE(got.is_ok()) << "python rendered:\n"
                               << want << "\nwe failed: " << got.status().message();
      if (got.is_ok()) {
        EXPECT_EQ(*got, want);
      }
      ++ok_both;
    } else {
      EXPECT_FALSE(got.is_ok()) << "python failed: " << want << "\nwe rendered:\n" << *got;
      if (!got.is_ok() && want.rfind("raise: ", 0) == 0) {
        EXPECT_EQ(got.status().message(), want.substr(7));
      }
      ++failed_both;
    }
  }
  std::printf("[ conformance ] %d snippets render identically, %d fail in both\n", ok_both,
              failed_both);
}

}  // namespace
}  // namespace cohort
