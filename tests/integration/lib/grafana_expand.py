"""grafana_expand.py - turns a panel's rawSql into the SQL that Grafana's
PostgreSQL data source sends to the server, for the dashboards' tests
(tests/integration/grafana.bats).

Grafana does it in two stages, and so does expand():

1. Template variables, in the browser (packages/grafana-sql,
   SqlDatasource.interpolateVariable, through templateSrv.replace):
   `$name` and `${name}` are replaced by the variable's value.  A
   multi-value or include-all variable becomes its values as quoted
   literals joined by commas ('a','b': "All" without a custom all value
   is every option); a single-value variable becomes its value with each
   ' doubled and no quotes around it (the SQL writes '$job').  The
   built-in `$__interval` is the panel's interval, e.g. 1h.
   A `$name` Grafana does not know stays as it is; here that is an
   error, as are `[[name]]` and `${name:format}`, which the dashboards
   do not use.
2. Macros, in the server (pkg/tsdb/grafana-postgresql-datasource,
   macros.go): every `$__name(args)` (args up to the first ')': a macro
   argument cannot hold parentheses there either), args split at ','
   and trimmed:
     $__timeFilter(c)          c BETWEEN 'FROM' AND 'TO'
     $__timeFrom()             'FROM'
     $__timeTo()               'TO'
     $__timeGroup(c, I)        floor(extract(epoch from c)/S)*S
     $__timeGroupAlias(c, I)   the same followed by  AS "time"
   FROM and TO are the range's ends in UTC, RFC 3339 with the fraction
   of a second only when there is one (Go's time.RFC3339Nano); S is the
   interval I in seconds as Go's %v prints a float64 (integers below
   10^6 print as integers: intervals of a week or less).  Fill modes
   (a third argument), $__timeGroup followed by ',' (Grafana then adds
   the alias) and the other macros are refused: the dashboards keep to
   this set so that the expansion here is exactly Grafana's.
"""

import datetime
import re

# templateSrv's variable pattern: $name, [[name:fmt]], ${name.field:fmt}
VARIABLE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}")
# macros.go's pattern
MACRO = re.compile(r"\$([_a-zA-Z0-9]+)\(([^)]*)\)")
INTERVAL = re.compile(r"^([0-9]+)(s|m|h|d|w)$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MACROS = ("__timeFilter", "__timeFrom", "__timeTo", "__timeGroup", "__timeGroupAlias")


class ExpandError(Exception):
    pass


def quote_literal(value):
    return "'" + str(value).replace("'", "''") + "'"


def _variable_text(name, variables):
    value, multi = variables[name]
    if isinstance(value, list):
        if not multi:
            raise ExpandError(f"variable {name}: a list for a single-value variable")
        return ",".join(quote_literal(v) for v in value)
    if multi:
        return quote_literal(value)
    return str(value).replace("'", "''")


def expand_variables(sql, variables):
    """VARIABLES: name -> (value or list of values, multi_or_include_all)."""
    def repl(m):
        simple, bracket, _, braced, field, fmt = m.groups()
        if bracket is not None or field is not None or fmt is not None:
            raise ExpandError(f"unsupported variable syntax {m.group(0)}")
        name = simple if simple is not None else braced
        if name in variables:
            return _variable_text(name, variables)
        if name in MACROS:
            return m.group(0)       # a macro: the server's stage
        raise ExpandError(f"unknown variable ${name}")
    return VARIABLE.sub(repl, sql)


def rfc3339nano(t):
    """T: an aware datetime.  Go's time.RFC3339Nano in UTC."""
    t = t.astimezone(datetime.timezone.utc)
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        s += ("." + f"{t.microsecond:06d}").rstrip("0")
    return s + "Z"


def interval_seconds(text):
    m = INTERVAL.match(text.strip("'"))
    if m is None:
        raise ExpandError(f"interval {text!r}: only whole s, m, h, d or w")
    seconds = int(m.group(1)) * UNIT_SECONDS[m.group(2)]
    if seconds <= 0 or seconds >= 1000000:
        raise ExpandError(f"interval {text!r}: Go would print {seconds} s in exponent form")
    return seconds


def _macro(name, args, t_from, t_to):
    if name == "__timeFilter":
        if not args or args[0] == "":
            raise ExpandError("$__timeFilter needs a column")
        return f"{args[0]} BETWEEN '{rfc3339nano(t_from)}' AND '{rfc3339nano(t_to)}'"
    if name == "__timeFrom":
        return f"'{rfc3339nano(t_from)}'"
    if name == "__timeTo":
        return f"'{rfc3339nano(t_to)}'"
    if name in ("__timeGroup", "__timeGroupAlias"):
        if len(args) != 2:
            raise ExpandError(f"${name}: a column and an interval (no fill mode here)")
        s = interval_seconds(args[1])
        group = f"floor(extract(epoch from {args[0]})/{s})*{s}"
        return group + ' AS "time"' if name == "__timeGroupAlias" else group
    raise ExpandError(f"unsupported macro ${name}")


def expand_macros(sql, t_from, t_to):
    out = []
    pos = 0
    for m in MACRO.finditer(sql):
        name, raw = m.group(1), m.group(2)
        if name == "__timeGroup" and sql[m.end():m.end() + 1] == ",":
            raise ExpandError("$__timeGroup followed by ',': use $__timeGroupAlias")
        args = [a.strip(" ") for a in raw.split(",")]
        out.append(sql[pos:m.start()])
        out.append(_macro(name, args, t_from, t_to))
        pos = m.end()
    out.append(sql[pos:])
    sql = "".join(out)
    if "$" in re.sub(r"'[^']*'", "", sql):
        raise ExpandError("a $ is left after expansion: " + sql)
    return sql


def expand(sql, t_from, t_to, variables):
    """The SQL Grafana sends for SQL with VARIABLES over [T_FROM, T_TO]."""
    return expand_macros(expand_variables(sql, variables), t_from, t_to)


def selftest():
    """Grafana's own examples (its documentation and macros_test.go)."""
    utc = datetime.timezone.utc
    f = datetime.datetime(2017, 4, 21, 5, 1, 17, tzinfo=utc)
    t = datetime.datetime(2017, 4, 21, 5, 6, 17, 500000, tzinfo=utc)
    cases = [
        ("WHERE $__timeFilter(time_column)", {},
         "WHERE time_column BETWEEN '2017-04-21T05:01:17Z' AND '2017-04-21T05:06:17.5Z'"),
        ("SELECT $__timeGroupAlias(time_column, 5m)", {},
         'SELECT floor(extract(epoch from time_column)/300)*300 AS "time"'),
        ("SELECT $__timeGroup(time_column,'1w')", {},
         "SELECT floor(extract(epoch from time_column)/604800)*604800"),
        ("SELECT $__timeGroupAlias(c, $__interval)", {"__interval": ("6h", False)},
         'SELECT floor(extract(epoch from c)/21600)*21600 AS "time"'),
        ("x > $__timeFrom() AND x < $__timeTo()", {},
         "x > '2017-04-21T05:01:17Z' AND x < '2017-04-21T05:06:17.5Z'"),
        ("c IN ($cluster)", {"cluster": (["a", "b'c"], True)}, "c IN ('a','b''c')"),
        ("c IN (${cluster})", {"cluster": ("a", True)}, "c IN ('a')"),
        ("k = '$job'", {"job": ("1' OR '1", False)}, "k = '1'' OR ''1'"),
    ]
    for sql, variables, want in cases:
        got = expand(sql, f, t, variables)
        if got != want:
            raise ExpandError(f"selftest: {sql!r} gave {got!r}, want {want!r}")
    for bad in ("$__unixEpochFilter(x)", "$__timeGroup(x, 1h, 0)", "[[cluster]]",
                "${cluster:csv}", "$nosuch", "$__timeGroup(x, 30d)"):
        try:
            expand(bad, f, t, {"cluster": (["a"], True)})
        except ExpandError:
            continue
        raise ExpandError(f"selftest: {bad!r} was accepted")
