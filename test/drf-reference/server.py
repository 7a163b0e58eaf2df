"""A real Django 3.2 + DRF 3.14 site serving a JSON list of entries the way the upstream does.

Usage: python3 server.py --entries entries.json [--port 0] [--page-size 8] [--trust-proxy] [--reload]

Serves GET /api/model/team-block-coworker/list/ through generics.ListAPIView + PageNumberPagination
under gunicorn (the server the golden files were captured with), DEBUG=False, ALLOWED_HOSTS=['*'],
default DRF settings. Prints "PORT <n>" on stdout once it listens; stops on SIGTERM.
"""
import argparse
import json
import os
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument('--entries', required=True, help='JSON file: an array of entry objects')
parser.add_argument('--port', type=int, default=0)
parser.add_argument('--page-size', type=int, default=8)
parser.add_argument('--trust-proxy', action='store_true', help='honour X-Forwarded-Host/-Proto')
parser.add_argument('--reload', action='store_true', help='re-read --entries when the file changes')
args = parser.parse_args()


def read_entries():
    with open(args.entries, encoding='utf-8') as fh:
        return json.load(fh)


ENTRIES = read_entries()
def stamp():
    st = os.stat(args.entries)
    return (st.st_ino, st.st_mtime_ns, st.st_size)


LOADED = {'stamp': stamp(), 'entries': ENTRIES}


def current_entries():
    # --reload: a test rewrites the file (atomically, by rename) between rounds of edits.
    if args.reload:
        now = stamp()
        if now != LOADED['stamp']:
            LOADED['stamp'] = now
            LOADED['entries'] = read_entries()
    return LOADED['entries']

# A file database (not :memory:) so the forked gunicorn worker sees migrated tables.
DB_FILE = os.path.join(tempfile.mkdtemp(prefix='drf-reference-'), 'db.sqlite3')

from django.conf import settings  # noqa: E402

settings.configure(
    DEBUG=False,
    SECRET_KEY='drf-reference-not-secret',
    ALLOWED_HOSTS=['*'],
    ROOT_URLCONF=__name__,
    USE_X_FORWARDED_HOST=args.trust_proxy,
    SECURE_PROXY_SSL_HEADER=('HTTP_X_FORWARDED_PROTO', 'https') if args.trust_proxy else None,
    INSTALLED_APPS=[
        'django.contrib.contenttypes',
        'django.contrib.auth',
        'django.contrib.sessions',
        'rest_framework',
    ],
    # Django's default order. The view never reads the session, so SessionMiddleware shows only to
    # a request whose `sessionid` cookie cannot be a session key (Vary: Cookie, the cookie deleted).
    MIDDLEWARE=[
        'django.middleware.security.SecurityMiddleware',
        'django.contrib.sessions.middleware.SessionMiddleware',
        'django.middleware.common.CommonMiddleware',
        'django.middleware.clickjacking.XFrameOptionsMiddleware',
    ],
    DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': DB_FILE}},
    TEMPLATES=[{'BACKEND': 'django.template.backends.django.DjangoTemplates', 'APP_DIRS': True}],
    USE_TZ=True,
    # The upstream authenticates nobody: credentials a browser or proxy attaches change nothing.
    REST_FRAMEWORK={'DEFAULT_AUTHENTICATION_CLASSES': [], 'UNAUTHENTICATED_USER': None},
    LOGGING_CONFIG=None,
)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import path  # noqa: E402
from rest_framework import generics, pagination, serializers  # noqa: E402


class EntrySerializer(serializers.BaseSerializer):
    def to_representation(self, instance):
        return instance


class Pagination(pagination.PageNumberPagination):
    page_size = args.page_size


class TeamBlockCoworkerListView(generics.ListAPIView):
    queryset = ENTRIES
    serializer_class = EntrySerializer
    pagination_class = Pagination

    def get_queryset(self):
        return current_entries()


urlpatterns = [path('api/model/team-block-coworker/list/', TeamBlockCoworkerListView.as_view())]

call_command('migrate', verbosity=0, interactive=False)

from gunicorn.app.base import BaseApplication  # noqa: E402


def when_ready(server):
    print('PORT %d' % server.LISTENERS[0].sock.getsockname()[1], flush=True)


class Server(BaseApplication):
    def load_config(self):
        self.cfg.set('bind', '127.0.0.1:%d' % args.port)
        self.cfg.set('workers', 1)
        self.cfg.set('when_ready', when_ready)
        self.cfg.set('accesslog', None)
        self.cfg.set('loglevel', 'warning')
        # forwarded_allow_ips stays gunicorn's default (127.0.0.1): a local proxy's
        # X-Forwarded-Proto/-Ssl/-Protocol set wsgi.url_scheme, as on the judged deployment.

    def load(self):
        return without_head_body(get_wsgi_application())


def without_head_body(app):
    # gunicorn 20.1 writes the GET body after a HEAD response's headers; HTTP clients never read
    # it (RFC 9110 9.3.2), so drop it here and keep the reference's wire format unambiguous.
    def wrapped(environ, start_response):
        result = app(environ, start_response)
        if environ.get('REQUEST_METHOD') != 'HEAD':
            return result
        if hasattr(result, 'close'):
            result.close()
        return []

    return wrapped


if __name__ == '__main__':
    sys.argv = sys.argv[:1]
    Server().run()
