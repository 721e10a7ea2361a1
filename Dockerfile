FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

WORKDIR /app

# Dependencies only (no packages are present yet), so code changes do not reinstall them.
# The code itself runs from /app (on PYTHONPATH).
COPY pyproject.toml README.md ./
RUN python -m pip install . && python -m pip uninstall -y briscola-service

COPY . .
RUN SECRET_KEY=build-only-not-secret DEBUG=false python manage.py collectstatic --noinput

RUN useradd --create-home --uid 10001 briscola && chown -R briscola:briscola /app
USER briscola

EXPOSE 8000
CMD ["gunicorn", "briscola_service.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
