"""The admin site's login form: the throttled one (:mod:`operations.login_throttle`)."""

from django.contrib import admin

from .login_throttle import ThrottledAdminAuthenticationForm

admin.site.login_form = ThrottledAdminAuthenticationForm
