/* timefmt.c — times for people (timefmt.h). */
#include "util/timefmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void time_local_text(double t, char *buf, size_t cap)
{
    struct tm tm;
    time_t tt = t > 0 && t < 1e15 ? (time_t)t : 0; /* past year 30 million: unknown */
    if (!tt || !localtime_r(&tt, &tm) ||
        !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, cap, "%s", TIME_UNKNOWN);
}

void time_duration_text(double s, char *buf, size_t cap)
{
    if (!(s >= 0) || !(s < 1e15)) {
        snprintf(buf, cap, "%s", TIME_UNKNOWN);
        return;
    }
    long long n = llround(s), d = n / 86400, h = n / 3600 % 24, m = n / 60 % 60, sec = n % 60;
    if (d)
        snprintf(buf, cap, "%lldd %02lldh %02lldm", d, h, m);
    else if (h)
        snprintf(buf, cap, "%lldh %02lldm %02llds", h, m, sec);
    else if (m)
        snprintf(buf, cap, "%lldm %02llds", m, sec);
    else
        snprintf(buf, cap, "%llds", sec);
}

int time_parse_since(const char *s, double now, double *out)
{
    double v;
    char unit, extra;
    if (sscanf(s, "%lf%c%c", &v, &unit, &extra) == 2 && v >= 0 && isfinite(v)) {
        const char *units = "smhdw";
        const double secs[] = {1, 60, 3600, 86400, 7 * 86400};
        const char *u = strchr(units, unit);
        if (!u || !unit)
            return -1;
        *out = fmax(0.0, now - v * secs[u - units]); /* before 1970: everything */
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int y, mo, d, h = 0, mi = 0, sec = 0, used = 0;
    char sep;
    int got = sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used);
    if (got != 3)
        return -1;
    if (s[used]) {
        int more = 0;
        if (sscanf(s + used, "%c%2d:%2d%n", &sep, &h, &mi, &more) != 3 ||
            (sep != ' ' && sep != 'T'))
            return -1;
        used += more;
        if (s[used] == ':') {
            more = 0;
            if (sscanf(s + used, ":%2d%n", &sec, &more) != 1)
                return -1;
            used += more;
        }
        if (s[used])
            return -1;
    }
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1] + (mo == 2 && leap) || h > 23 ||
        mi > 59 || sec > 60 || h < 0 || mi < 0 || sec < 0) /* no Feb 30: mktime would move it */
        return -1;
    tm = (struct tm){.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                     .tm_min = mi, .tm_sec = sec, .tm_isdst = -1};
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (double)t;
    return 0;
}
