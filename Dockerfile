FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

WORKDIR /app

# Dependencies only (no packages are present yet), so code changes do not reinstall them:
# the serving ones, without the dev extra, at the versions constraints.txt pins.
# The code itself runs from /app (on PYTHONPATH).
COPY pyproject.toml README.md constraints.txt ./
RUN python -m pip install -c constraints.txt . && python -m pip uninstall -y briscola-service

COPY . .
RUN SECRET_KEY=build-only-not-secret DEBUG=false python manage.py collectstatic --noinput

RUN useradd --create-home --uid 10001 briscola && chown -R briscola:briscola /app
USER briscola

EXPOSE 8000
# gunicorn managing uvicorn workers (ASGI): see README, "Serving". No control socket (it
# would be ~/.gunicorn/gunicorn.ctl, shared by every instance of the user).
CMD ["gunicorn", "briscola_service.asgi", "--worker-class", "briscola_service.serving.Worker", \
     "--bind", "0.0.0.0:8000", "--workers", "3", "--keep-alive", "5", "--timeout", "60", \
     "--access-logfile", "-", "--no-control-socket"]
